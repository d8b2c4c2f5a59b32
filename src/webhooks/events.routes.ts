import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Config } from '../config.js'
import { callerKeyOf } from '../http/guard.js'
import { publicUrlOf } from '../http/public-url.js'
import { nextPageLink } from '../pagination/link.js'
import { ref } from '../schema-ref.js'
import type { EventLog } from './event-log.js'
import { getEventResponses, listEventsResponses, redeliverResponses } from './webhooks.responses.js'
import { emptyBodyAsObject, experimental } from './webhooks.routes.js'
import { EventParams, ListEventsQuery, Redelivery } from './webhooks.schemas.js'

const events = { ...experimental, tags: ['events'] }

/**
 * Sends JSON text as it is: an event is stored and delivered as text, and served as the same bytes (Fastify
 * sends a string without serialising it; the response schema still documents its shape).
 */
function sendJson(reply: FastifyReply, json: string) {
  return reply.type('application/json; charset=utf-8').send(json as never)
}

/** The event log and redelivery (CONTRACT §14, experimental). Bodies are the delivered JSON, byte for byte. */
export function registerEventRoutes(
  app: FastifyInstance,
  deps: { eventLog: EventLog; config: Config },
): void {
  const { eventLog, config } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.get(
    '/events',
    {
      schema: {
        operationId: 'listEvents',
        summary: 'Events of the last 30 days (experimental)',
        description:
          "Every pet's events and the calling account's order events, in commit order (ids sort as text in " +
          'that order); a walk along `Link: rel="next"` sees every event that committed before it started. ' +
          '`order=desc` lists the newest first instead.',
        ...events,
        querystring: ListEventsQuery,
        response: listEventsResponses,
      },
    },
    async (request, reply) => {
      const { limit = 20, type, cursor, order } = request.query
      const apiKeyId = callerKeyOf(request).id
      const page = await eventLog.listEvents({ apiKeyId, limit, type, cursor, order })
      if (page.nextCursor) {
        reply.header(
          'link',
          nextPageLink(publicUrlOf(config, request), '/events', { limit, type, order }, page.nextCursor),
        )
      }
      return sendJson(reply, `[${page.items.join(',')}]`)
    },
  )

  api.get(
    '/events/:eventId',
    {
      schema: {
        operationId: 'getEvent',
        summary: 'One event (experimental)',
        description: 'The event exactly as it is delivered.',
        ...events,
        params: EventParams,
        response: getEventResponses,
      },
    },
    async (request, reply) => {
      const body = await eventLog.getEvent(callerKeyOf(request).id, request.params.eventId)
      return sendJson(reply, body)
    },
  )

  api.post(
    '/events/:eventId/redeliver',
    {
      schema: {
        operationId: 'redeliverEvent',
        summary: 'Send an event again (experimental)',
        description:
          "A new series of attempts, with the same `webhook-id`, to the named endpoint of the caller's or to " +
          'every enabled one subscribed to the event; needs a `write` key.',
        ...events,
        params: EventParams,
        body: ref(Redelivery),
        response: redeliverResponses,
      },
      preValidation: emptyBodyAsObject,
    },
    async (request, reply) => {
      const accepted = await eventLog.redeliver(
        callerKeyOf(request).id,
        request.params.eventId,
        request.body?.endpointId,
      )
      return reply.code(202).send(accepted)
    },
  )
}
