import { randomBytes } from 'node:crypto'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { expect, test, vi } from 'vitest'
import { type CompressedPrefix, createCompressedPrefix } from './compressed-prefix.js'
import { compressionCount } from './compression.js'

const OPTIONS = { contentType: 'application/json; charset=utf-8', cacheControl: 'no-cache' }

/** A prefix that compresses as a document does (repetitive text), with bytes that no dictionary knows. */
function textPrefix(): string {
  const words = Array.from({ length: 400 }, (_, i) => `"field${i}":"${randomBytes(6).toString('hex')}"`)
  return `{${Array.from({ length: 40 }, () => words.join(',')).join(',')}`
}

async function ready(prefix: CompressedPrefix): Promise<void> {
  await vi.waitFor(
    () => {
      const asset = prefix.withSuffix('', '"t"', OPTIONS)
      expect(asset.representation('br') && asset.representation('gzip')).toBeDefined()
    },
    { timeout: 30_000, interval: 20 },
  )
}

test.each([
  ['no suffix', ''],
  ['a server list', ',"servers":[{"url":"http://[::1]:8443/v1","description":"This server (dev)"}]}'],
  [
    'text that is not ASCII',
    ',"servers":[{"url":"http://xn--bcher-kva.example/v1","description":"Bücher ✓"}]}',
  ],
  ['a suffix over one stored DEFLATE block (65,535 bytes)', `,"x":"${'ab'.repeat(40_000)}"}`],
])('the prefix followed by %s decodes, in br and gzip, to exactly the text', async (_name, suffix) => {
  const text = textPrefix()
  const prefix = createCompressedPrefix(text)
  await ready(prefix)
  const asset = prefix.withSuffix(suffix, '"tag"', OPTIONS)
  const whole = Buffer.from(text + suffix)
  expect(asset.representation('identity')?.body().equals(whole)).toBe(true)
  expect(brotliDecompressSync(asset.representation('br')?.body() ?? Buffer.alloc(0)).equals(whole)).toBe(true)
  expect(gunzipSync(asset.representation('gzip')?.body() ?? Buffer.alloc(0)).equals(whole)).toBe(true)
  expect(['identity', 'br', 'gzip'].map((coding) => asset.representation(coding as 'br')?.etag)).toEqual([
    '"tag"',
    '"tag-br"',
    '"tag-gzip"',
  ])
  expect(asset.representation('br')?.body().length).toBeLessThan(whole.length / 3)
})

test('a suffix over one brotli meta-block (16 MiB) decodes too', async () => {
  const prefix = createCompressedPrefix(textPrefix())
  await ready(prefix)
  const suffix = 'x'.repeat(2 ** 24 + 10)
  const br = prefix.withSuffix(suffix, '"t"', OPTIONS).representation('br')?.body() ?? Buffer.alloc(0)
  expect(brotliDecompressSync(br).subarray(-suffix.length).toString()).toBe(suffix)
})

test('the prefix is compressed once, whatever the suffixes', async () => {
  const before = compressionCount()
  const prefix = createCompressedPrefix(textPrefix())
  await ready(prefix)
  for (let i = 0; i < 50; i++)
    prefix.withSuffix(`,"servers":[{"url":"http://h${i}.example/v1"}]}`, '"t"', OPTIONS)
  expect(compressionCount() - before).toBe(2)
})

test('until the prefix is compressed, only identity is offered', () => {
  const asset = createCompressedPrefix(textPrefix()).withSuffix('}', '"t"', OPTIONS)
  expect(asset.representation('br')).toBeUndefined()
  expect(asset.representation('gzip')).toBeUndefined()
  expect(asset.representation('identity')).toBeDefined()
})
