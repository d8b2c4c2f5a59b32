/**
 * The naive sketch: what the three operations look like written in an afternoon, the honest baseline the
 * service is measured against. Fastify 5 with request and response schemas, keys in a `Map`, and either
 * better-sqlite3 prepared statements on the same seeded file (WAL, synchronous=FULL, one transaction per
 * insert) or `pg` with a pool of 10 (the service's default) on the same database, with the same SQL;
 * no rate limits, no logging, no metrics, no idempotency, no cursor check.
 * `tsx bench/naive.ts <database file | postgres:// URL> <api key>`; prints `listening <port>`.
 */
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'
import pg from 'pg'

const [database = '', apiKey = ''] = process.argv.slice(2)
const keys = new Map([[apiKey, { id: 1 }]])

type NewPet = { name: string; categoryId: number; status?: string }
interface Store {
  page(afterId: number, limit: number, status?: string): Promise<unknown[]> | unknown[]
  byId(id: number): Promise<unknown> | unknown
  insert(pet: NewPet): Promise<unknown> | unknown
  close(): Promise<void> | void
}

const columns = 'id, name, category_id AS "categoryId", status'
const live = 'deleted_at IS NULL'

function sqliteStore(path: string): Store {
  const sqlite = new SQLite(path)
  sqlite.pragma('journal_mode = WAL')
  sqlite.pragma('synchronous = FULL')
  const page = sqlite.prepare(`SELECT ${columns} FROM pets WHERE ${live} AND id > ? ORDER BY id LIMIT ?`)
  const pageByStatus = sqlite.prepare(
    `SELECT ${columns} FROM pets WHERE ${live} AND id > ? AND status = ? ORDER BY id LIMIT ?`,
  )
  const byId = sqlite.prepare(`SELECT ${columns} FROM pets WHERE ${live} AND id = ?`)
  const insert = sqlite.prepare(
    `INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?) RETURNING ${columns}`,
  )
  const insertOne = sqlite.transaction((pet: NewPet) =>
    insert.get(pet.name, pet.categoryId, pet.status ?? null, Date.now()),
  )
  return {
    page: (afterId, limit, status) =>
      status ? pageByStatus.all(afterId, status, limit) : page.all(afterId, limit),
    byId: (id) => byId.get(id),
    insert: insertOne,
    close: () => {
      sqlite.close()
    },
  }
}

function postgresStore(url: string): Store {
  const pool = new pg.Pool({ connectionString: url, max: 10 })
  const rows = async (text: string, values: unknown[]) => (await pool.query(text, values)).rows
  return {
    page: (afterId, limit, status) =>
      status
        ? rows(`SELECT ${columns} FROM pets WHERE ${live} AND id > $1 AND status = $2 ORDER BY id LIMIT $3`, [
            afterId,
            status,
            limit,
          ])
        : rows(`SELECT ${columns} FROM pets WHERE ${live} AND id > $1 ORDER BY id LIMIT $2`, [
            afterId,
            limit,
          ]),
    byId: async (id) => (await rows(`SELECT ${columns} FROM pets WHERE ${live} AND id = $1`, [id]))[0],
    insert: async (pet) =>
      (
        await rows(
          `INSERT INTO pets (name, category_id, status, created_at) VALUES ($1, $2, $3, $4) RETURNING ${columns}`,
          [pet.name, pet.categoryId, pet.status ?? null, Date.now()],
        )
      )[0],
    close: () => pool.end(),
  }
}

const store = /^postgres(ql)?:/.test(database) ? postgresStore(database) : sqliteStore(database)

const status = { type: 'string', enum: ['available', 'pending', 'sold'] }
const pet = {
  type: 'object',
  required: ['id', 'name', 'categoryId'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, categoryId: { type: 'integer' }, status },
}
const error = { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } }
/** Rows carry `status: null`; the spec's Pet leaves it out. */
const clean = (row: unknown) => {
  const found = row as { status: string | null }
  if (found.status === null) delete (found as { status?: unknown }).status
  return found
}

const app = Fastify()
app.addHook('onRequest', async (request, reply) => {
  const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1]
  if (!token || !keys.has(token)) return reply.code(401).send({ code: 'unauthorized', message: 'bad key' })
})
app.get(
  '/v1/pets',
  {
    schema: {
      querystring: {
        type: 'object',
        properties: {
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
          status,
          after: { type: 'integer' },
        },
      },
      response: { 200: { type: 'array', items: pet } },
    },
  },
  async (request) => {
    const query = request.query as { limit: number; status?: string; after?: number }
    return (await store.page(query.after ?? 0, query.limit, query.status)).map(clean)
  },
)
app.get(
  '/v1/pets/:petId',
  {
    schema: {
      params: { type: 'object', properties: { petId: { type: 'integer', minimum: 1 } } },
      response: { 200: pet, 404: error },
    },
  },
  async (request, reply) => {
    const row = await store.byId((request.params as { petId: number }).petId)
    if (!row) return reply.code(404).send({ code: 'not_found', message: 'no such pet' })
    return clean(row)
  },
)
app.post(
  '/v1/pets',
  {
    schema: {
      body: {
        type: 'object',
        required: ['name', 'categoryId'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 100 },
          categoryId: { type: 'integer', minimum: 1 },
          status,
        },
      },
      response: { 201: pet },
    },
  },
  async (request, reply) => reply.code(201).send(clean(await store.insert(request.body as NewPet))),
)

await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
process.once('SIGTERM', async () => {
  await app.close()
  await store.close()
  process.exit(0)
})
