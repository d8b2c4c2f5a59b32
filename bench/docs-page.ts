import { mkdtempSync, rmSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { startService } from './lib.js'

/**
 * What a first visit of /v1/docs transfers (`npx tsx bench/docs-page.ts`, after `npm run build`): the
 * service as users start it, asked for the page and everything it loads (its files, the document at
 * /v1/docs/json) as chromium asks, `Accept-Encoding: gzip, deflate, br, zstd`, and as a client that accepts
 * no coding, or only gzip; and how long after the first visit each file took to come in gzip and in br.
 */

interface Answer {
  bytes: number
  coding: string
  body: Buffer
}

function fetchRaw(port: number, path: string, accept?: string, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers = accept ? { 'accept-encoding': accept } : {}
    const sent = request({ port, path, method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => {
        const body = Buffer.concat(chunks)
        resolve({ bytes: body.length, coding: response.headers['content-encoding'] ?? 'identity', body })
      })
    })
    sent.on('error', reject)
    sent.end()
  })
}

/** The page and what it loads: its `src` and `href` (a favicon: a browser takes one), then the document. */
async function pagePaths(port: number): Promise<string[]> {
  const page = (await fetchRaw(port, '/v1/docs')).body.toString()
  const linked = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1] ?? '')
  return ['/v1/docs', ...linked.filter((path) => !path.includes('favicon-16x16')), '/v1/docs/json']
}

/** Milliseconds from `started` until `path` comes in `coding`. */
async function until(port: number, path: string, coding: 'br' | 'gzip', started: number): Promise<number> {
  while ((await fetchRaw(port, path, coding, 'HEAD')).coding !== coding) {
    if (Date.now() - started > 120_000) return Number.NaN
    await delay(20)
  }
  return Date.now() - started
}

const CHROMIUM = 'gzip, deflate, br, zstd'

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-docs-bench-'))
  // Out of the per-IP limit's reach: the bench asks every 20 ms until each file is compressed.
  const service = await startService(join(dir, 'petstore.sqlite'), { PETSTORE_PUBLIC_PER_MINUTE: '1000000' })
  const { port } = service
  try {
    const paths = await pagePaths(port)
    const started = Date.now()
    const first = await Promise.all(paths.map((path) => fetchRaw(port, path, CHROMIUM)))
    const ready = await Promise.all(
      paths.map(async (path) => [
        await until(port, path, 'gzip', started),
        await until(port, path, 'br', started),
      ]),
    )
    console.info('| file | first visit after start | identity | gzip | br | gzip, br ready after (ms) |')
    console.info('|---|---|---|---|---|---|')
    const totals = [0, 0, 0, 0]
    for (const [index, path] of paths.entries()) {
      const cold = first[index] as Answer
      const sizes = [cold.bytes]
      for (const accept of [undefined, 'gzip', CHROMIUM])
        sizes.push((await fetchRaw(port, path, accept)).bytes)
      sizes.forEach((size, column) => {
        totals[column] = (totals[column] ?? 0) + size
      })
      const [gzipAfter, brAfter] = ready[index] ?? []
      const after = sizes[1] === sizes[3] ? '(under 1 KB or not text)' : `${gzipAfter}, ${brAfter}`
      console.info(`| ${path} | ${sizes.join(' | ')} | ${after} |`)
    }
    console.info(`| total | ${totals.join(' | ')} | |`)
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()
