import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPetstoreClient, type PetstoreClient, PetstoreError } from '../../client/src/index.js'
import { countPets } from '../helpers.js'
import { type FaultProxy, startFaultProxy } from './fault-proxy.js'
import { type ServedApp, serveTestApp } from './served-app.js'

let t: ServedApp
let proxy: FaultProxy
let key: string

beforeEach(async () => {
  t = await serveTestApp()
  proxy = await startFaultProxy(t.port)
  key = await t.issueKey()
})

afterEach(async () => {
  await proxy.close()
  await t.close()
})

function clientThroughProxy(maxRetries?: number): PetstoreClient {
  return createPetstoreClient({ baseUrl: proxy.baseUrl, apiKey: key, maxRetries, sleep: async () => {} })
}

describe('responses lost on the way back', () => {
  it('retries createPet with the same Idempotency-Key: exactly one pet per call', async () => {
    proxy.dropResponses(10)
    const client = clientThroughProxy()
    const created = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.createPet({ name: `Pet ${i}`, categoryId: 1 })),
    )

    expect(proxy.connections.filter((connection) => connection.dropped)).toHaveLength(10)
    expect(await countPets(t)).toBe(10)
    expect(new Set(created.map((pet) => pet.id)).size).toBe(10)
    expect(created.map((pet) => pet.name)).toEqual(Array.from({ length: 10 }, (_, i) => `Pet ${i}`))
    // Every request whose response was lost was sent again, with its key, on another connection.
    const sentKeys = proxy.connections.flatMap((connection) => connection.idempotencyKeys)
    const lostKeys = proxy.connections.filter((c) => c.dropped).flatMap((c) => c.idempotencyKeys)
    expect(new Set(sentKeys).size).toBe(10)
    for (const lost of lostKeys) expect(sentKeys.filter((sent) => sent === lost).length).toBeGreaterThan(1)
  })

  it('retries a GET', async () => {
    const pet = await createPetstoreClient({ baseUrl: t.baseUrl, apiKey: key }).createPet({
      name: 'Rex',
      categoryId: 1,
    })
    proxy.dropResponses(1)
    expect(await clientThroughProxy().listPets()).toEqual({ pets: [pet] })
    expect(proxy.connections).toMatchObject([
      { dropped: true, requests: ['GET /v1/pets'] },
      { dropped: false, requests: ['GET /v1/pets'] },
    ])
  })

  it('throws network_error once maxRetries retries have failed too', async () => {
    proxy.dropResponses(100)
    const error = await clientThroughProxy(2)
      .listPets()
      .catch((reason: unknown) => reason)
    expect(error).toBeInstanceOf(PetstoreError)
    expect(error).toMatchObject({
      status: 0,
      code: 'network_error',
      message: expect.stringContaining(proxy.baseUrl),
    })
    expect(proxy.connections).toHaveLength(3)
  })
})
