import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createPetstoreClient, type Pet, type PetstoreClient } from '../../client/src/index.js'
import { recordingFetch, type ServedApp, serveTestApp } from './served-app.js'

let t: ServedApp
let client: PetstoreClient
let recorder: ReturnType<typeof recordingFetch>

beforeEach(async () => {
  t = await serveTestApp()
  recorder = recordingFetch()
  client = createPetstoreClient({ baseUrl: t.baseUrl, apiKey: await t.issueKey(), fetch: recorder.fetch })
})

afterEach(async () => {
  await t.close()
})

async function createPets(count: number, status?: Pet['status']): Promise<Pet[]> {
  const pets: Pet[] = []
  for (let i = 0; i < count; i++) {
    pets.push(
      await client.createPet(
        status ? { name: `Pet ${i}`, categoryId: 1, status } : { name: `Pet ${i}`, categoryId: 1 },
      ),
    )
  }
  return pets
}

describe('listPets', () => {
  it('returns the cursor of the Link rel="next" header until the last page', async () => {
    const pets = await createPets(5)
    const first = await client.listPets({ limit: 2 })
    expect(first).toEqual({ pets: pets.slice(0, 2), nextCursor: expect.any(String) })
    const second = await client.listPets({ limit: 2, cursor: first.nextCursor })
    expect(second).toEqual({ pets: pets.slice(2, 4), nextCursor: expect.any(String) })
    expect(await client.listPets({ limit: 2, cursor: second.nextCursor })).toEqual({ pets: pets.slice(4) })
  })
})

describe('pets.all', () => {
  it('walks every page and sees each pet that existed before the walk exactly once, while pets are added', async () => {
    const before = await createPets(45)
    const seen: number[] = []
    let walking = true
    const added: Pet[] = []
    const writer = (async () => {
      while (walking && added.length < 200)
        added.push(await client.createPet({ name: 'Newcomer', categoryId: 2 }))
    })()
    for await (const pet of client.pets.all({ limit: 10 })) {
      seen.push(pet.id)
      // Give the writer a turn on every pet, so pages and creations interleave.
      await new Promise((resolve) => setImmediate(resolve))
    }
    walking = false
    await writer

    expect(added.length).toBeGreaterThan(0)
    expect(new Set(seen).size).toBe(seen.length)
    expect(seen).toEqual([...seen].sort((a, b) => a - b))
    expect(seen.slice(0, before.length)).toEqual(before.map((pet) => pet.id))
    const pages = recorder.sent.filter((request) => request.method === 'GET')
    expect(pages.length).toBeGreaterThanOrEqual(5)
    expect(pages.slice(1).every((page) => page.url.includes('cursor='))).toBe(true)
  })

  it('keeps the status filter on every page', async () => {
    const sold = await createPets(3, 'sold')
    await createPets(2, 'available')
    sold.push(...(await createPets(2, 'sold')))
    const walked: Pet[] = []
    for await (const pet of client.pets.all({ status: 'sold', limit: 2 })) walked.push(pet)
    expect(walked).toEqual(sold)
  })
})
