/**
 * The naive sketch: what the three operations look like written in an afternoon, the honest baseline the
 * service is measured against. Fastify 5 with request and response schemas, keys in a `Map`,
 * better-sqlite3 prepared statements on the same seeded file (WAL, synchronous=FULL, one transaction per
 * insert); no rate limits, no logging, no metrics, no idempotency, no cursor check.
 * `tsx bench/naive.ts <database file> <api key>`; prints `listening <port>`.
 */
import SQLite from 'better-sqlite3'
import Fastify from 'fastify'

const [databasePath = '', apiKey = ''] = process.argv.slice(2)
const sqlite = new SQLite(databasePath)
sqlite.pragma('journal_mode = WAL')
sqlite.pragma('synchronous = FULL')
const keys = new Map([[apiKey, { id: 1 }]])

const columns = 'id, name, category_id AS categoryId, status'
const page = sqlite.prepare(`SELECT ${columns} FROM pets WHERE id > ? ORDER BY id LIMIT ?`)
const pageByStatus = sqlite.prepare(
  `SELECT ${columns} FROM pets WHERE id > ? AND status = ? ORDER BY id LIMIT ?`,
)
const byId = sqlite.prepare(`SELECT ${columns} FROM pets WHERE id = ?`)
const insert = sqlite.prepare(
  `INSERT INTO pets (name, category_id, status, created_at) VALUES (?, ?, ?, ?) RETURNING ${columns}`,
)
const insertOne = sqlite.transaction((pet: { name: string; categoryId: number; status?: string }) =>
  insert.get(pet.name, pet.categoryId, pet.status ?? null, Date.now()),
)

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
    const rows = query.status
      ? pageByStatus.all(query.after ?? 0, query.status, query.limit)
      : page.all(query.after ?? 0, query.limit)
    return rows.map(clean)
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
    const row = byId.get((request.params as { petId: number }).petId)
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
  async (request, reply) => reply.code(201).send(clean(insertOne(request.body as never))),
)

await app.listen({ port: 0, host: '127.0.0.1' })
const address = app.server.address()
process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
process.once('SIGTERM', async () => {
  await app.close()
  sqlite.close()
  process.exit(0)
})
