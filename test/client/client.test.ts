import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPetstoreClient, type PetstoreClient, type PetstoreWarning } from '../../client/src/index.js'
import { countPets } from '../helpers.js'
import { type FaultProxy, startFaultProxy } from './fault-proxy.js'
import { failure, recordingFetch, type ServedApp, serveTestApp } from './served-app.js'

let t: ServedApp
let key: string

beforeEach(async () => {
  t = await serveTestApp()
  key = await t.issueKey()
})

afterEach(async () => {
  await t.close()
})

function clientFor(
  apiKey = key,
  more: Partial<Parameters<typeof createPetstoreClient>[0]> = {},
): PetstoreClient {
  return createPetstoreClient({ baseUrl: t.baseUrl, apiKey, sleep: async () => {}, ...more })
}

describe('typed results', () => {
  it('creates, lists and gets pets, and keeps the last X-RateLimit-* values', async () => {
    const client = clientFor(await t.issueKey('enterprise', { perMinute: 1000, perDay: 100_000 }))
    expect(client.rateLimit).toEqual({})
    const rex = await client.createPet({ name: 'Rex', categoryId: 1, status: 'available' })
    const tom = await client.createPet({ name: 'Tom', categoryId: 2 })
    expect(rex).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 1, status: 'available' })
    expect(tom).toEqual({ id: rex.id + 1, name: 'Tom', categoryId: 2 })
    expect(await client.listPets()).toEqual({ pets: [rex, tom] })
    expect(await client.listPets({ status: 'available' })).toEqual({ pets: [rex] })
    expect(await client.getPet(tom.id)).toEqual(tom)
    expect(client.rateLimit).toEqual({
      limit: 1000,
      remaining: 1000 - 5,
      reset: Date.UTC(2027, 0, 1, 0, 1) / 1000,
    })
  })

  it('replays the pet of a caller-given Idempotency-Key instead of creating another', async () => {
    const client = clientFor()
    const first = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-17' })
    const again = await client.createPet({ name: 'Rex', categoryId: 1 }, { idempotencyKey: 'order-17' })
    expect(again).toEqual(first)
    expect(await countPets(t)).toBe(1)
  })

  it('refuses options that cannot work', () => {
    expect(() => createPetstoreClient({ baseUrl: 'not a url', apiKey: key })).toThrow(TypeError)
    expect(() => createPetstoreClient({ baseUrl: t.baseUrl, apiKey: '' })).toThrow(/apiKey/)
    expect(() => createPetstoreClient({ baseUrl: t.baseUrl, apiKey: key, maxRetries: -1 })).toThrow(
      /maxRetries/,
    )
  })
})

describe('typed errors', () => {
  it('throws 400 invalid_request with the request id, and does not retry it', async () => {
    const recorder = recordingFetch()
    const client = clientFor(key, { fetch: recorder.fetch })
    // @ts-expect-error categoryId is required by the generated NewPet type
    const error = await failure(client.createPet({ name: 'Rex' }))
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_request',
      message: expect.stringMatching(/categoryId/),
    })
    expect(error.requestId).toMatch(/^[\w.:-]+$/)
    expect(error.rateLimit).toMatchObject({ limit: 1_000_000_000, remaining: expect.any(Number) })
    expect(recorder.sent).toHaveLength(1)
    expect(await countPets(t)).toBe(0)
  })

  it('throws 401 unauthorized for a key the service does not know', async () => {
    const error = await failure(clientFor('ps_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').listPets())
    expect(error).toMatchObject({ status: 401, code: 'unauthorized', name: 'PetstoreError' })
    expect(error.requestId).toEqual(expect.any(String))
  })

  it('throws 404 not_found for a pet that does not exist', async () => {
    const error = await failure(clientFor().getPet(424242))
    expect(error).toMatchObject({
      status: 404,
      code: 'not_found',
      message: expect.stringContaining('424242'),
    })
  })
})

describe('the deprecated getPet', () => {
  it('warns once per client, with the date of the Sunset header', async () => {
    const warnings: PetstoreWarning[] = []
    const client = clientFor(key, { onWarning: (warning) => warnings.push(warning) })
    const pet = await client.createPet({ name: 'Rex', categoryId: 1 })
    await failure(client.getPet(424242))
    await client.getPet(pet.id)
    await client.getPet(pet.id)
    expect(warnings).toEqual([
      {
        code: 'deprecated_operation',
        operation: 'getPet',
        sunset: new Date('2030-12-05T00:00:00Z'),
        message:
          'getPet is deprecated and will be removed on 2030-12-05; use getPets([id]) (listPets with ?id=) instead',
      },
    ])
    const other: PetstoreWarning[] = []
    await clientFor(key, { onWarning: (warning) => other.push(warning) }).getPet(pet.id)
    expect(other).toHaveLength(1)
  })

  it('does not warn about operations that are not deprecated', async () => {
    const warnings: PetstoreWarning[] = []
    const client = clientFor(key, { onWarning: (warning) => warnings.push(warning) })
    await client.createPet({ name: 'Rex', categoryId: 1 })
    await client.listPets()
    expect(warnings).toEqual([])
  })
})

describe('abort and timeout', () => {
  let proxy: FaultProxy | undefined

  afterEach(async () => {
    await proxy?.close()
    proxy = undefined
  })

  it('sends nothing when the signal has already aborted', async () => {
    const recorder = recordingFetch()
    const controller = new AbortController()
    controller.abort()
    const call = clientFor(key, { fetch: recorder.fetch }).listPets({ signal: controller.signal })
    await expect(call).rejects.toMatchObject({ name: 'AbortError' })
    expect(recorder.sent).toEqual([])
  })

  it('stops waiting out a 429 when the signal aborts', async () => {
    const tight = await t.issueKey('enterprise', { perMinute: 1, perDay: 100 })
    const recorder = recordingFetch()
    const controller = new AbortController()
    const client = clientFor(tight, {
      fetch: recorder.fetch,
      // The caller gives up while the client waits out Retry-After, which never ends here.
      sleep: () => {
        controller.abort()
        return new Promise<void>(() => {})
      },
    })
    await client.listPets()
    await expect(client.listPets({ signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' })
    expect(recorder.refusals).toEqual([{ code: 'rate_limited', retryAfterSeconds: 60 }])
    expect(recorder.sent).toHaveLength(2)
  })

  it('gives up after timeoutMs on a service that never answers, without retrying', async () => {
    proxy = await startFaultProxy(t.port)
    proxy.holdConnections(1)
    const client = createPetstoreClient({ baseUrl: proxy.baseUrl, apiKey: key, sleep: async () => {} })
    await expect(client.listPets({ timeoutMs: 200 })).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(proxy.connections).toEqual([{ dropped: false, held: true, requests: [], idempotencyKeys: [] }])
  })
})
