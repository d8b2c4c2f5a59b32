import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { COMMON_ERRORS, documented } from '../http/error.schemas.js'
import { callerKeyOf } from '../http/guard.js'
import { windowsAsSeen } from '../rate-limit/windows.js'
import { ref } from '../schema-ref.js'
import { PLANS, type Plan, SCOPES } from './api-keys.plans.js'
import type { ApiKeyService } from './api-keys.service.js'

const RateLimitWindow = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, description: 'Requests allowed in the window.' }),
    remaining: Type.Integer({ minimum: 0, description: 'Requests left in it now (0 during a ban).' }),
    reset: Type.Integer({
      description:
        'Unix time in seconds at which the window admits requests again: its end, or the end of a ban if later.',
    }),
  },
  { additionalProperties: false },
)

/** `GET /v1/rate_limit`: the caller's standing (CONTRACT §10). */
export const RateLimitStatus = Type.Object(
  {
    plan: Type.Enum([...PLANS]),
    scope: Type.Enum([...SCOPES], { description: '`read`: GET and HEAD only; `write`: every operation.' }),
    expiresAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the key stops working; null: never.',
    }),
    limits: Type.Object({ minute: RateLimitWindow, day: RateLimitWindow }, { additionalProperties: false }),
    bannedUntil: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Unix time in seconds at which a ban ends; null when the key is not banned.',
    }),
    rotationPendingUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'After `keys rotate`: when the replaced secret stops working (both work until then); null when no ' +
        'rotation is pending.',
    }),
  },
  { $id: 'RateLimitStatus', additionalProperties: false },
)

const seconds = (ms: number) => Math.ceil(ms / 1000)

declare module '../http/guard.js' {
  /** What the guard's principal carries for this route: the key the api-keys service verified. */
  interface Principal {
    readonly plan: Plan
    readonly expiresAt: number | null
  }
}

/**
 * The caller's plan, scope, expiry, windows and ban. The guard looked at the windows without counting
 * this request, and let it through even during a ban (guard.ts), so a client can always ask.
 */
export function registerStandingRoute(
  app: FastifyInstance,
  apiKeys: Pick<ApiKeyService, 'rotationPendingUntil'>,
): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/rate_limit',
    {
      config: { uncounted: true },
      schema: {
        operationId: 'getRateLimit',
        summary: "The calling key's plan, scope, expiry, rate-limit windows and ban",
        description:
          'Not counted against the limits, and answered even while the key is banned. The `X-RateLimit-*` ' +
          'headers describe the same numbers.',
        tags: ['account'],
        'x-stability': 'stable',
        response: {
          200: documented(ref(RateLimitStatus), "The caller's standing."),
          401: COMMON_ERRORS[401],
          429: COMMON_ERRORS[429],
          500: COMMON_ERRORS[500],
          503: COMMON_ERRORS[503],
        },
      },
    },
    async (request) => {
      const apiKey = callerKeyOf(request)
      const decision = request.caller?.rateLimit
      // The windows as the X-RateLimit-* headers of this response describe them (during a ban: nothing
      // remains, and each resets when the ban ends if that is later).
      const windows = decision ? windowsAsSeen(decision) : []
      const window = (name: string) => {
        const found = windows.find((candidate) => candidate.name === name)
        if (!found) throw new Error(`the limiter gave no ${name} window`)
        return { limit: found.limit, remaining: found.remaining, reset: seconds(found.resetAt) }
      }
      const rotationPendingUntil = await apiKeys.rotationPendingUntil(apiKey.id)
      return {
        plan: apiKey.plan,
        scope: apiKey.scope,
        expiresAt: apiKey.expiresAt === null ? null : new Date(apiKey.expiresAt).toISOString(),
        limits: { minute: window('minute'), day: window('day') },
        bannedUntil: decision?.outcome === 'banned' ? seconds(decision.bannedUntil) : null,
        rotationPendingUntil:
          rotationPendingUntil === null ? null : new Date(rotationPendingUntil).toISOString(),
      }
    },
  )
}
