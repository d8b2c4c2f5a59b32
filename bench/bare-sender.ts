/**
 * The bare sender of bench/webhook-scale.ts: signed POSTs of one body to the receiver with `node:http` and
 * nothing else (no database, no dispatcher, no retry). Its rate is what the machine allows a sender, the
 * ceiling the dispatcher is measured against; beside the service's load, it shows what the same machine
 * leaves any sender. `inProcess` runs it in a process of its own, so that the load generator beside it in
 * the bench's process neither slows it nor is slowed by it.
 */

import { spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { signatureHeader } from '../src/webhooks/signature.js'

export interface SenderJob {
  /** The receiver's base URL, and the paths posted to in turn (one agent each). */
  base: string
  paths: string[]
  body: string
  /**
   * `count` POSTs as fast as 4 kept-alive sockets per path allow; or that, for `seconds`; or `perSec` a
   * second for `seconds` whatever the answers' speed (an open loop).
   */
  pace: { count: number } | { seconds: number } | { perSec: number; seconds: number }
}

export interface SenderResult {
  sent: number
  perSec: number
}

const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`

export async function bareSend(job: SenderJob): Promise<SenderResult> {
  const agents = job.paths.map(() => new Agent({ keepAlive: true, maxSockets: 4 }))
  let next = 0
  const send = () =>
    new Promise<void>((resolve, reject) => {
      const index = next++
      const id = `evt_${String(index).padStart(16, '0')}`
      const timestamp = Math.floor(Date.now() / 1000)
      const req = request(`${job.base}${job.paths[index % job.paths.length]}`, {
        method: 'POST',
        agent: agents[index % agents.length],
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader([SECRET], id, timestamp, job.body),
        },
      })
      req.on('response', (response) => response.resume().on('end', resolve))
      req.on('error', reject)
      req.end(job.body)
    })
  const started = performance.now()
  const { pace } = job
  if ('perSec' in pace) {
    const total = Math.round(pace.perSec * pace.seconds)
    const sent: Promise<void>[] = []
    for (let i = 0; i < total; i++) {
      await delay(Math.max(0, started + (i * 1000) / pace.perSec - performance.now()))
      sent.push(send())
    }
    await Promise.all(sent)
  } else {
    const goOn =
      'count' in pace ? () => next < pace.count : () => performance.now() - started < pace.seconds * 1000
    // 4 workers per path: each path's 4 sockets always busy.
    await Promise.all(
      Array.from({ length: 4 * job.paths.length }, async () => {
        while (goOn()) await send()
      }),
    )
  }
  const perSec = next / ((performance.now() - started) / 1000)
  for (const agent of agents) agent.destroy()
  return { sent: next, perSec }
}

/** `bareSend` in a process of its own; its figures. */
export function inProcess(job: SenderJob): Promise<SenderResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), JSON.stringify(job)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8')
    })
    child.on('error', reject)
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(output) as SenderResult)
        : reject(new Error(`the bare sender exited ${code}`)),
    )
  })
}

if (process.argv[1] === import.meta.filename) {
  console.log(JSON.stringify(await bareSend(JSON.parse(process.argv[2] ?? '{}') as SenderJob)))
}
