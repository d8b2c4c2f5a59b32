import { expect } from 'vitest'
import { killService, type Service } from './service-process.js'

/** A write burst cut short by SIGKILL, and what must hold afterwards. */

export type Pet = { id: number; name: string; categoryId: number; status?: string }
export type SentPet = Omit<Pet, 'id'> & { idempotencyKey: string }

export interface Burst {
  /** Pets answered 201 before the kill, as answered. */
  acknowledged: Pet[]
  /** Every body sent, by name (names are unique), with its Idempotency-Key. */
  sent: Map<string, SentPet>
  /** Requests that got no 201: their connection died with the process. */
  failed: number
}

function post(baseUrl: string, key: string, pet: SentPet): Promise<Response> {
  const { idempotencyKey, ...body } = pet
  return fetch(`${baseUrl}/v1/pets`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify(body),
  })
}

/**
 * Sends `count` concurrent creates (each with its own Idempotency-Key) to `service` and SIGKILLs it once
 * `killAfter` of them have been acknowledged; resolves when every request has ended.
 */
export async function burstThenKill(
  service: Service,
  key: string,
  options: { count: number; killAfter: number; label: string },
): Promise<Burst> {
  const burst: Burst = { acknowledged: [], sent: new Map(), failed: 0 }
  const baseUrl = `http://127.0.0.1:${service.port}`
  const requests = Array.from({ length: options.count }, async (_, i) => {
    const pet = {
      name: `${options.label} ${i}`,
      categoryId: i + 1,
      status: 'available',
      idempotencyKey: `${options.label}-${i}`,
    }
    burst.sent.set(pet.name, pet)
    try {
      const response = await post(baseUrl, key, pet)
      if (response.status === 201) burst.acknowledged.push((await response.json()) as Pet)
      else burst.failed++
    } catch {
      burst.failed++
    }
  })
  while (burst.acknowledged.length < options.killAfter && burst.failed === 0) {
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
  await killService(service)
  await Promise.all(requests)
  return burst
}

/**
 * Every pet (or those whose name starts with `label `), walking all pages by their `Link rel="next"`.
 * `baseUrl` may name another server per page: a cursor from one instance is good on any.
 */
export async function storedPets(
  baseUrl: string | ((page: number) => string),
  key: string,
  label?: string,
): Promise<Pet[]> {
  const base = typeof baseUrl === 'string' ? () => baseUrl : baseUrl
  const pets: Pet[] = []
  let query: string | undefined = '?limit=100'
  for (let page = 0; query !== undefined; page++) {
    const response: Response = await fetch(`${base(page)}/v1/pets${query}`, {
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.status).toBe(200)
    pets.push(...((await response.json()) as Pet[]))
    const next = /<([^>]+)>; rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
    query = next && new URL(next).search
  }
  return label === undefined ? pets : pets.filter((pet) => pet.name.startsWith(`${label} `))
}

/**
 * What must hold after the kill, read through `baseUrl` (a restarted or another instance): every
 * acknowledged pet is stored with its exact fields; every stored pet is exactly one of the bodies sent;
 * and a stored pet that was never acknowledged is what its Idempotency-Key replays (so its client,
 * retrying, gets it instead of a second pet).
 */
export async function expectNothingLost(baseUrl: string, key: string, label: string, burst: Burst) {
  const stored = await storedPets(baseUrl, key, label)
  const byId = new Map(stored.map((pet) => [pet.id, pet]))
  for (const pet of burst.acknowledged) expect(byId.get(pet.id)).toEqual(pet)
  const acknowledgedIds = new Set(burst.acknowledged.map((pet) => pet.id))
  for (const pet of stored) {
    const sent = burst.sent.get(pet.name)
    expect(sent, pet.name).toBeDefined()
    const { idempotencyKey, ...body } = sent as SentPet
    expect(pet).toEqual({ id: pet.id, ...body })
    if (acknowledgedIds.has(pet.id)) continue
    const replay = await post(baseUrl, key, sent as SentPet)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(await replay.json()).toEqual(pet)
  }
  expect(new Set(stored.map((pet) => pet.name)).size).toBe(stored.length)
  return { stored: stored.length, acknowledged: burst.acknowledged.length }
}
