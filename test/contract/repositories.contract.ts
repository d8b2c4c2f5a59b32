import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type ApiKeyRepository, createApiKeyRepository } from '../../src/api-keys/api-keys.repository.js'
import type { Db } from '../../src/db/database.js'
import type { DbHandle } from '../../src/db/handle.js'
import { migrateToLatest } from '../../src/db/migrate.js'
import {
  createEventRecorder,
  publishAddressedEvent,
  publishEvents,
} from '../../src/events/events.publisher.js'
import { createEventsRepository, PING } from '../../src/events/events.repository.js'
import { createIdempotencyRepository } from '../../src/idempotency/idempotency.repository.js'
import { createPetRepository, type PetRepository } from '../../src/pets/pets.repository.js'
import { createClaimsRepository } from '../../src/webhooks/claims.repository.js'
import { createEndpointsRepository } from '../../src/webhooks/endpoints.repository.js'

/** A fresh, empty database of one adapter, and how to throw it away. */
export type DatabaseFactory = () => Promise<{ handle: DbHandle; drop(): Promise<void> }>

const T0 = Date.UTC(2027, 0, 1)

/** What every database adapter must do the same way, through the same repositories. */
export function describeRepositoryContract(name: string, createDatabase: DatabaseFactory): void {
  describe(`repository contract: ${name}`, () => {
    let handle: DbHandle
    let db: Db
    let pets: PetRepository
    let keys: ApiKeyRepository
    let drop: () => Promise<void>
    beforeEach(async () => {
      ;({ handle, drop } = await createDatabase())
      db = handle.db
      await migrateToLatest(db)
      pets = createPetRepository(handle)
      keys = createApiKeyRepository(handle)
    })
    afterEach(async () => {
      await handle.close()
      await drop()
    })

    const key = (hash: string) => ({
      keyHash: hash,
      prefix: 'ps_live_abcd',
      name: null,
      plan: 'free' as const,
      environment: 'production',
      custom: {},
      scope: 'write' as const,
      expiresAt: null,
      createdAt: T0,
    })

    test('a pet reads back exactly, with the largest safe category id and no status when none was given', async () => {
      const rex = await pets.insertPet(db, { name: 'Rex 🐕', categoryId: Number.MAX_SAFE_INTEGER }, T0)
      const tom = await pets.insertPet(db, { name: 'Tom', categoryId: 2, status: 'sold' }, T0)
      expect(tom.id).toBeGreaterThan(rex.id)
      expect(await pets.findPetById(rex.id)).toEqual({
        pet: { id: rex.id, name: 'Rex 🐕', categoryId: Number.MAX_SAFE_INTEGER },
        version: 1,
      })
      expect(await pets.findPetById(tom.id)).toEqual({
        pet: { id: tom.id, name: 'Tom', categoryId: 2, status: 'sold' },
        version: 1,
      })
      expect(await pets.findPetById(tom.id + 1)).toBeUndefined()
    })

    test('a change moves the version, the locked read gives the live pet at it, and a deleted pet is gone from reads', async () => {
      const rex = await pets.insertPet(db, { name: 'Rex', categoryId: 1, status: 'available' }, T0)
      const changed = { pet: { id: rex.id, name: 'Rex', categoryId: 1 }, version: 2 }
      expect(await pets.updatePet(db, rex.id, { status: null })).toEqual(changed)
      expect(await handle.write((trx) => pets.lockPet(trx, rex.id))).toEqual(changed)
      expect(await pets.deletePet(db, rex.id, T0)).toMatchObject({ pet: { id: rex.id } })
      expect(await pets.deletePet(db, rex.id, T0)).toBeUndefined()
      expect(await pets.findPetById(rex.id)).toBeUndefined()
      expect(await pets.listPetsByIds([rex.id])).toEqual([])
      expect(await handle.write((trx) => pets.lockPet(trx, rex.id))).toBeUndefined()
      expect(await pets.updatePet(db, rex.id, { name: 'Back' })).toBeUndefined()
    })

    test('pets inserted together come back in the order given, each with its own new id', async () => {
      const names = Array.from({ length: 1_203 }, (_, index) => `Pet ${index}`)
      const items = names.map((name, index) => ({ pet: { name, categoryId: index + 1 }, createdAt: T0 }))
      const inserted = await handle.write((trx) => pets.insertPets(trx, items))
      expect(inserted.map((pet) => pet.name)).toEqual(names)
      expect(inserted.map((pet) => pet.categoryId)).toEqual(names.map((_, index) => index + 1))
      const ids = inserted.map((pet) => pet.id)
      expect(ids).toEqual([...ids].sort((a, b) => a - b))
      expect(new Set(ids).size).toBe(names.length)
    })

    test('pets asked for in the same turn are each found (PostgreSQL reads them in one query)', async () => {
      const made = await Promise.all(
        ['A', 'B', 'C'].map((name) => pets.insertPet(db, { name, categoryId: 1 }, T0)),
      )
      const ids = made.map((pet) => pet.id).sort((a, b) => a - b)
      const found = await Promise.all([...ids, ids[0] ?? 0, 999_999].map((id) => pets.findPetById(id)))
      expect(found.map((record) => record?.pet.id)).toEqual([...ids, ids[0], undefined])
    })

    test('the change token moves with every commit, by this handle or another connection, and not with reads', async () => {
      // Read in a later turn each time: both tokens are shared by the callers of one turn.
      const token = async () => {
        await new Promise((resolve) => setImmediate(resolve))
        return handle.changeToken?.()
      }
      const before = await token()
      expect(before).toBeDefined()
      // On PostgreSQL the token is the server's snapshot, which commits in the other databases of the
      // server move too (test:services runs files side by side): a read must leave it as it was in at
      // least one of a few tries. A read that moved it itself would move it every time.
      let unmovedByRead = false
      for (let tries = 0; tries < 5 && !unmovedByRead; tries++) {
        const around = await token()
        await pets.listPetsAfter({ afterId: 0, limit: 20 })
        unmovedByRead = (await token()) === around
      }
      expect(unmovedByRead).toBe(true)
      await handle.write((trx) => pets.insertPet(trx, { name: 'Rex', categoryId: 1 }, T0))
      const afterWrite = await token()
      expect(afterWrite).not.toBe(before)
      await db.updateTable('pets').set({ name: 'Renamed' }).execute()
      expect(await token()).not.toBe(afterWrite)
    })

    test('a prepared write runs once per argument list in the write’s transaction, returns each run’s RETURNING rows, and rolls back with it', async () => {
      const rex = await pets.insertPet(db, { name: 'Rex', categoryId: 1 }, T0)
      const rename = handle.prepareWrite((db, id: number, name: string) =>
        db.updateTable('pets').set({ name, category_id: 1 }).where('id', '=', id).returning(['id', 'name']),
      )
      const touch = handle.prepareWrite((db, id: number) =>
        db.updateTable('pets').set({ version: 7 }).where('id', '=', id),
      )
      const rows = await handle.write(async (trx) => {
        expect(await touch(trx, [[rex.id]])).toEqual([[]])
        return rename(trx, [
          [rex.id, 'Renamed'],
          [rex.id + 1_000, 'Nobody'],
          [rex.id, 'Max'],
        ])
      })
      // One list of rows per run, in the order given (the last run's name stays).
      expect(rows.map((found) => found.map((row) => ({ ...row, id: Number(row.id) })))).toEqual([
        [{ id: rex.id, name: 'Renamed' }],
        [],
        [{ id: rex.id, name: 'Max' }],
      ])
      expect(await pets.findPetById(rex.id)).toMatchObject({ pet: { name: 'Max' }, version: 7 })
      const failed = handle.write(async (trx) => {
        await rename(trx, [[rex.id, 'Undone']])
        throw new Error('rolled back')
      })
      await expect(failed).rejects.toThrow('rolled back')
      expect((await pets.findPetById(rex.id))?.pet.name).toBe('Max')
    })

    test('the ownership read answers each attempt asked in one turn: pending, held by that owner, its endpoint enabled, with its URL and secrets', async () => {
      const account = await keys.insertApiKey(key('hash-own'))
      const fields = { url: 'https://hooks.example/in', events: ['*'], description: null }
      const endpoints = createEndpointsRepository(handle)
      const endpoint = await handle.write((trx) => endpoints.insert(trx, account.id, fields, 'whsec_a', T0))
      const asking = (id: number) => ({ id, endpoint: { id: endpoint.id } })
      const row = (status: string, lease_token: string | null) => ({
        event_seq: 1,
        endpoint_id: endpoint.id,
        attempt: 1,
        status,
        due_at: T0,
        at: T0,
        lease_token,
      })
      const rows = [
        row('pending', 'a/1/x'),
        row('pending', 'b/2/y'),
        row('succeeded', 'a/1/x'),
        row('pending', null),
      ]
      const ids = []
      for (const values of rows) {
        const { id } = await db
          .insertInto('webhook_attempts')
          .values(values)
          .returning('id')
          .executeTakeFirstOrThrow()
        ids.push(Number(id))
      }
      const claims = createClaimsRepository(handle)
      const asked = [...ids, Math.max(...ids) + 1].map((id) => claims.targetIfOwn(asking(id), 'a/1/x'))
      const target = { url: fields.url, secret: 'whsec_a', retired: [] }
      expect(await Promise.all(asked)).toEqual([target, undefined, undefined, undefined, undefined])
      expect(await claims.targetIfOwn(asking(ids[1] as number), 'b/2/y')).toEqual(target)
      // Its endpoint disabled (its pending attempts not all ended yet: the sweep ends the rest), none is.
      await handle.write((trx) => endpoints.update(trx, endpoint.id, { status: 'disabled' }))
      const afterDisable = createClaimsRepository(handle)
      expect(await afterDisable.targetIfOwn(asking(ids[0] as number), 'a/1/x')).toBeUndefined()
    })

    test('a take holds, per endpoint, up to its count of due attempts not yet the owner’s, oldest due first', async () => {
      const account = await keys.insertApiKey(key('hash-take'))
      const endpoints = createEndpointsRepository(handle)
      const fields = { url: 'https://hooks.example/in', events: ['*'], description: null }
      const [first, second] = await handle.write(async (trx) => [
        await endpoints.insert(trx, account.id, fields, 'whsec_a', T0),
        await endpoints.insert(trx, account.id, fields, 'whsec_b', T0),
      ])
      const seq = await handle.write((trx) =>
        publishAddressedEvent(handle, trx, { type: PING, accountId: account.id, object: {}, createdAt: T0 }),
      )
      const attempt = async (
        endpointId: number,
        dueAt: number,
        leaseToken: string | null,
        status = 'pending',
      ) => {
        const values = { event_seq: seq, endpoint_id: endpointId, attempt: 1, status, due_at: dueAt, at: T0 }
        const { id } = await db
          .insertInto('webhook_attempts')
          .values({ ...values, lease_token: leaseToken })
          .returning('id')
          .executeTakeFirstOrThrow()
        return Number(id)
      }
      const firstId = Number(first?.id)
      const secondId = Number(second?.id)
      const oldest = await attempt(firstId, T0, null)
      const held = await attempt(firstId, T0 + 1, 'a/1/x')
      const deadOwners = await attempt(firstId, T0 + 2, 'b/2/y')
      const beyondCount = await attempt(firstId, T0 + 3, null)
      await attempt(firstId, T0 + 100, null) // not due yet
      await attempt(firstId, T0, null, 'succeeded')
      const other = await attempt(secondId, T0, null)
      const claims = createClaimsRepository(handle)
      const taken = await handle.write((trx) =>
        claims.take(trx, {
          owner: 'a/1/x',
          wants: [
            { endpointId: firstId, count: 2 },
            { endpointId: secondId, count: 5 },
          ],
          now: T0 + 10,
        }),
      )
      // Oldest due first (then by id), with the event's body; the URL and secrets are read at the start.
      expect(taken.map((claimed) => claimed.id)).toEqual([oldest, other, deadOwners])
      expect(taken[0]).toEqual({
        id: oldest,
        attempt: 1,
        redelivery: false,
        endpoint: { id: firstId },
        event: expect.objectContaining({ seq, type: PING, object: '{}' }),
      })
      const own = [oldest, held, deadOwners, beyondCount].map((id) =>
        claims.targetIfOwn({ id, endpoint: { id: firstId } }, 'a/1/x'),
      )
      own.push(claims.targetIfOwn({ id: other, endpoint: { id: secondId } }, 'a/1/x'))
      expect((await Promise.all(own)).map((target) => target?.secret)).toEqual([
        'whsec_a',
        'whsec_a',
        'whsec_a',
        undefined,
        'whsec_b',
      ])
    })

    test('keyset pages are in ascending id order after the cursor, optionally by status', async () => {
      const statuses = ['available', 'pending', 'sold', undefined, 'available'] as const
      const ids: number[] = []
      for (const [i, status] of statuses.entries()) {
        ids.push(
          (await pets.insertPet(db, { name: `pet ${i}`, categoryId: 1, ...(status && { status }) }, T0)).id,
        )
      }
      const first = await pets.listPetsAfter({ afterId: 0, limit: 2 })
      expect(first.map((pet) => pet.id)).toEqual(ids.slice(0, 2))
      const rest = await pets.listPetsAfter({ afterId: ids[1] ?? 0, limit: 10 })
      expect(rest.map((pet) => pet.id)).toEqual(ids.slice(2))
      const available = await pets.listPetsAfter({ afterId: 0, limit: 10, status: 'available' })
      expect(available.map((pet) => pet.id)).toEqual([ids[0], ids[4]])
      expect(await pets.listPetsAfter({ afterId: ids[4] ?? 0, limit: 10 })).toEqual([])
    })

    test('an idempotency key is claimed once per API key, completed, reclaimed and purged by age', async () => {
      const apiKey = await keys.insertApiKey(key('hash-1'))
      const other = await keys.insertApiKey(key('hash-2'))
      const records = createIdempotencyRepository(handle)
      const claim = { apiKeyId: apiKey.id, key: 'k1', requestHash: 'h1', createdAt: T0 }
      expect(await records.claim(db, claim)).toBe(true)
      expect(await records.claim(db, { ...claim, requestHash: 'h2' })).toBe(false)
      expect(await records.claim(db, { ...claim, apiKeyId: other.id })).toBe(true)
      const pet = await pets.insertPet(db, { name: 'Rex', categoryId: 1 }, T0)
      const body = JSON.stringify(pet)
      await records.complete(db, apiKey.id, 'k1', { made: { petId: pet.id }, body })
      expect(await records.find(db, apiKey.id, 'k1')).toMatchObject({
        requestHash: 'h1',
        first: { made: { petId: pet.id }, body },
      })
      await records.reclaim(db, { ...claim, requestHash: 'h3', createdAt: T0 + 10 })
      expect(await records.find(db, apiKey.id, 'k1')).toMatchObject({
        requestHash: 'h3',
        first: null,
      })
      expect(await records.purge(T0 + 5)).toBe(1)
      expect(await records.find(db, other.id, 'k1')).toBeUndefined()
      expect(await records.find(db, apiKey.id, 'k1')).toBeDefined()
    })

    test('keys are found by hash, listed in id order and revoked once', async () => {
      const first = await keys.insertApiKey(key('hash-a'))
      const second = await keys.insertApiKey({
        ...key('hash-b'),
        plan: 'enterprise',
        custom: { perMinute: 5, perDay: 7 },
      })
      expect(await keys.findApiKeyByHash('hash-b')).toEqual({ apiKey: second, retired: null })
      expect(second.limits).toEqual({ perMinute: 5, perDay: 7 })
      expect(await keys.findApiKeyByHash('hash-c')).toBeUndefined()
      expect((await keys.listApiKeys()).map((k) => k.id)).toEqual([first.id, second.id])
      expect(await keys.revokeApiKey(first.id, T0 + 1)).toMatchObject({ revokedAt: T0 + 1 })
      expect(await keys.revokeApiKey(first.id, T0 + 2)).toMatchObject({ revokedAt: T0 + 1 })
      expect(await keys.revokeApiKey(second.id + 100, T0)).toBeUndefined()
    })

    test('a rotation keeps the id, retires the old secret with its grace, and an update changes only what it names', async () => {
      const original = await keys.insertApiKey(key('hash-old'))
      const rotated = await keys.rotateApiKey(
        original.id,
        { keyHash: 'hash-new', prefix: 'ps_live_wxyz' },
        T0 + 5,
        T0 + 50,
      )
      expect(rotated).toMatchObject({ id: original.id, prefix: 'ps_live_wxyz' })
      expect(await keys.findApiKeyByHash('hash-new')).toEqual({ apiKey: rotated, retired: null })
      expect(await keys.findApiKeyByHash('hash-old')).toEqual({
        apiKey: rotated,
        retired: { retiredAt: T0 + 5, usableUntil: T0 + 50 },
      })
      expect(await keys.pendingRotations(T0 + 49)).toEqual(new Set([original.id]))
      expect(await keys.pendingRotations(T0 + 50)).toEqual(new Set())
      expect(
        await keys.rotateApiKey(original.id + 100, { keyHash: 'x', prefix: 'y' }, T0, T0),
      ).toBeUndefined()
      const updated = await keys.updateApiKey(original.id, { scope: 'read', expiresAt: T0 + 99 })
      expect(updated).toMatchObject({ scope: 'read', expiresAt: T0 + 99, plan: 'free', name: null })
      const enterprise = await keys.updateApiKey(original.id, {
        plan: 'enterprise',
        custom: { perMinute: 3, perDay: 4 },
      })
      expect(enterprise).toMatchObject({
        plan: 'enterprise',
        limits: { perMinute: 3, perDay: 4 },
        scope: 'read',
      })
    })

    test('published with no endpoint enabled, events are born fanned out (PostgreSQL); with one, they wait; either way numbered in the order they were written, whatever the order of the rows on disk', async () => {
      const owner = await keys.insertApiKey(key('hash-owner'))
      const endpoints = createEndpointsRepository(handle)
      const events = createEventsRepository(handle)
      const record = (id: number) =>
        handle.write((trx) =>
          createEventRecorder(handle, () => T0).record(trx, [
            { type: 'pet.created', accountId: null, resourceVersion: 1, object: { id } },
          ]),
        )
      const publish = () => handle.write((trx) => publishEvents(handle, trx, endpoints.anyEnabledIn))
      const disabled = { url: 'https://off.example/in', events: ['*'], description: null }
      const off = await handle.write((trx) => endpoints.insert(trx, owner.id, disabled, 'whsec_x', T0))
      await handle.write((trx) =>
        trx.updateTable('webhook_endpoints').set({ status: 'disabled' }).where('id', '=', off.id).execute(),
      )
      await record(1)
      await record(2)
      // The first event's row written again: on disk it now lies after the second's (PostgreSQL).
      await db
        .updateTable('event_outbox')
        .set({ type: 'pet.created' })
        .where('object', '=', '{"id":1}')
        .execute()
      await publish()
      const fields = { url: 'https://hooks.example/in', events: ['*'], description: null }
      await handle.write((trx) => endpoints.insert(trx, owner.id, fields, 'whsec_y', T0))
      await record(3)
      await publish()
      const rows = await events.page(owner.id, T0, 0, 10)
      // SQLite numbers events as they are written, waiting: the dispatcher passes them over (fan-out.ts).
      const unowed = handle.dialect === 'postgres' ? 1 : 0
      expect(rows.map((row) => [row.object, row.fanned_out])).toEqual([
        ['{"id":1}', unowed],
        ['{"id":2}', unowed],
        ['{"id":3}', 0],
      ])
      expect(await events.anyUnpublished()).toBe(false)
    })
    test('a change’s events are kept exactly as recorded, in the order given, however many and whatever their text holds', async () => {
      const owner = await keys.insertApiKey(key('hash-owner'))
      // Quotes, a backslash, a line break, accents, an emoji, escaped control characters (NUL too) and a
      // lone surrogate: the stored object is JSON.stringify's text, byte for byte (PostgreSQL receives it
      // inside a JSON array, where a decoded `\u0000` or lone surrogate would be refused).
      const names = ['plain', 'say "hi"\\\n', 'Ça va — 🐈', '\u0007bell', ' spaced ', 'a\u0000b', 'x\ud800y']
      const count = 2_500
      const changes = Array.from({ length: count }, (_, index) => ({
        type: index % 2 === 0 ? ('pet.created' as const) : ('order.placed' as const),
        accountId: index % 2 === 0 ? null : owner.id,
        resourceVersion: index + 1,
        object: { id: index, name: names[index % names.length], tags: [], price: 1.5, none: null },
        traceParent: index === 7 ? '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' : null,
      }))
      await handle.write((trx) => createEventRecorder(handle, () => T0 + 5).record(trx, changes))
      const endpoints = createEndpointsRepository(handle)
      await handle.write((trx) => publishEvents(handle, trx, endpoints.anyEnabledIn))
      const rows = await createEventsRepository(handle).page(owner.id, T0, 0, count + 1)
      expect(rows.map((row) => [row.type, row.api_key_id, row.resource_version, row.object])).toEqual(
        changes.map((change) => [
          change.type,
          change.accountId,
          change.resourceVersion,
          JSON.stringify(change.object),
        ]),
      )
      expect(rows.every((row) => row.created_at === T0 + 5)).toBe(true)
      expect(rows.filter((row) => row.trace_parent !== null).map((row) => row.resource_version)).toEqual([8])
    })
    test('a test event is numbered after the changes before it, born fanned out, seen by its account only', async () => {
      const owner = await keys.insertApiKey(key('hash-owner'))
      const other = await keys.insertApiKey(key('hash-other'))
      const endpoints = createEndpointsRepository(handle)
      const fields = { url: 'https://hooks.example/in', events: ['order.*'], description: null }
      const endpoint = await handle.write((trx) => endpoints.insert(trx, owner.id, fields, 'whsec_x', T0))
      const change = { type: 'pet.created' as const, accountId: null, resourceVersion: 1, object: { id: 1 } }
      await handle.write((trx) => createEventRecorder(handle, () => T0).record(trx, [change]))
      const ping = await handle.write(async (trx) => {
        // The endpoint's row locked (PostgreSQL) and read as its owner's only, as a test event reads it.
        expect(await endpoints.lockOwnIn(trx, other.id, endpoint.id)).toBeUndefined()
        expect(await endpoints.lockOwnIn(trx, owner.id, endpoint.id)).toMatchObject({ id: endpoint.id })
        const object = { endpointId: 'we_1' }
        return publishAddressedEvent(handle, trx, {
          type: PING,
          accountId: owner.id,
          object,
          createdAt: T0 + 1,
        })
      })
      const events = createEventsRepository(handle)
      expect(await events.anyUnpublished()).toBe(false)
      const seen = await events.page(owner.id, T0, 0, 10)
      expect(seen.map((row) => [row.type, row.fanned_out, row.resource_version])).toEqual([
        ['pet.created', 0, 1],
        ['ping', 1, 1],
      ])
      expect(seen[1]).toMatchObject({ seq: ping, object: '{"endpointId":"we_1"}', api_key_id: owner.id })
      expect(ping).toBeGreaterThan(seen[0]?.seq ?? Number.POSITIVE_INFINITY)
      expect((await events.page(other.id, T0, 0, 10)).map((row) => row.type)).toEqual(['pet.created'])
      expect((await events.page(owner.id, T0, 0, 10, PING)).map((row) => row.seq)).toEqual([ping])
      const waiting = await handle.write((trx) => events.waitingIn(trx, 10))
      expect(waiting.map((row) => row.type)).toEqual(['pet.created'])
    })
  })
}
