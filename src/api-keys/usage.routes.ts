import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import type { Clock } from '../clock.js'
import type { DbHandle } from '../db/handle.js'
import { COMMON_ERRORS, documented, invalidRequest } from '../http/error.schemas.js'
import { callerKeyOf } from '../http/guard.js'
import { ref } from '../schema-ref.js'
import { type UsageDay as Counted, STATUS_CLASSES, USAGE_FLUSH_MS, usageOf } from './usage.js'

/** The days `GET /v1/usage` covers at most, and by default (CONTRACT §10). */
export const MAX_USAGE_DAYS = 90
export const DEFAULT_USAGE_DAYS = 30

const Requests = (description: string) => Type.Integer({ minimum: 0, description })

/** One UTC day of the account's requests, by status class (as `keys usage` prints them). */
export const UsageDay = Type.Object(
  {
    day: Type.String({ format: 'date', description: 'The UTC day, `YYYY-MM-DD`.' }),
    '2xx': Requests('Requests answered 1xx, 2xx or 3xx.'),
    '4xx': Requests('Requests answered 4xx, except 429.'),
    '429': Requests('Requests refused by the rate limits (429).'),
    '5xx': Requests('Requests answered 5xx.'),
  },
  { $id: 'UsageDay', additionalProperties: false, description: "One UTC day of the account's requests." },
)

export const Usage = Type.Array(ref(UsageDay), {
  $id: 'Usage',
  description: 'Every day of the range, newest first, days without requests as zeros.',
})

const UsageQuery = Type.Object({
  days: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_USAGE_DAYS,
      default: DEFAULT_USAGE_DAYS,
      description: 'How many UTC days, today included.',
    }),
  ),
})

/**
 * A day as JSON text, its fields in the order CONTRACT §10 writes them: JavaScript (and so the schema's
 * serializer) puts an integer-like key such as `"429"` before every other key of an object.
 */
function usageDayJson({ day, requests }: Counted): string {
  return `{"day":"${day}",${STATUS_CLASSES.map((name) => `"${name}":${requests[name]}`).join(',')}}`
}

/** `GET /v1/usage`: the caller's account's requests per UTC day, newest first (CONTRACT §10, experimental). */
export function registerUsageRoute(app: FastifyInstance, deps: { database: DbHandle; clock: Clock }): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/usage',
    {
      schema: {
        operationId: 'getUsage',
        summary: "The calling account's requests per day (experimental)",
        description:
          'Requests per UTC day by status class (`429` apart from the other `4xx`), today first, every day of ' +
          'the range present. Every request of the account counts, whichever of its secrets sent it, calls ' +
          `to this operation too. Each instance adds what it counted every ${USAGE_FLUSH_MS / 1000} seconds, ` +
          'so the numbers may lag the traffic (by at most a minute). A `read` key is enough.',
        tags: ['account'],
        'x-stability': 'experimental',
        querystring: UsageQuery,
        response: {
          200: documented(ref(Usage), 'The days, newest first.'),
          400: invalidRequest(`days must be an integer from 1 to ${MAX_USAGE_DAYS}`),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const { days = DEFAULT_USAGE_DAYS } = request.query
      const usage = await usageOf(deps.database, callerKeyOf(request).id, days, deps.clock.now())
      const body = `[${usage.reverse().map(usageDayJson).join(',')}]`
      return reply.type('application/json; charset=utf-8').send(body as never)
    },
  )
}
