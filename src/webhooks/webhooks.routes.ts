import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { callerKeyOf } from '../http/guard.js'
import { publicUrlOf } from '../http/public-url.js'
import { nextPageLink } from '../pagination/link.js'
import { ref } from '../schema-ref.js'
import type { EndpointService } from './endpoints.service.js'
import type { EventLog } from './event-log.js'
import { TEST_EVENTS_PER_MINUTE, type TestEvents } from './test-events.js'
import {
  createEndpointResponses,
  deleteEndpointResponses,
  getEndpointResponses,
  listDeliveriesResponses,
  listEndpointsResponses,
  rotateSecretResponses,
  sendTestEventResponses,
  updateEndpointResponses,
} from './webhooks.responses.js'
import {
  DEFAULT_GRACE_SECONDS,
  EndpointParams,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  MAX_GRACE_SECONDS,
  NewWebhookEndpoint,
  SecretRotation,
  WebhookEndpointPatch,
} from './webhooks.schemas.js'

export const experimental = { tags: ['webhooks'], 'x-stability': 'experimental' }

/** For operations whose body has only optional fields: no body at all means `{}`. */
export function emptyBodyAsObject(request: FastifyRequest, _reply: unknown, done: () => void): void {
  request.body ??= {}
  done()
}

/** Webhook endpoints and their delivery log (CONTRACT §14, experimental). */
export function registerWebhookRoutes(
  app: FastifyInstance,
  deps: { webhookEndpoints: EndpointService; eventLog: EventLog; testEvents: TestEvents; config: Config },
): void {
  const { webhookEndpoints: endpoints, eventLog, testEvents, config } = deps
  const api = app.withTypeProvider<TypeBoxTypeProvider>()

  api.post(
    '/webhook_endpoints',
    {
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Subscribe a URL to events (experimental)',
        description:
          'Registers an `https` URL at a public address for the events named (`order.*`, `pet.updated`, `*`); ' +
          'needs a `write` key. The response carries the signing secret, `whsec_…`, this once. At most 10 ' +
          'endpoints per account. Deliveries follow Standard Webhooks: verify them with any of its libraries.',
        ...experimental,
        body: ref(NewWebhookEndpoint),
        response: createEndpointResponses,
      },
    },
    async (request, reply) => {
      const created = await endpoints.create(callerKeyOf(request).id, request.body)
      reply.header('location', `${publicUrlOf(config, request)}/webhook_endpoints/${created.id}`)
      return reply.code(201).send(created)
    },
  )

  api.get(
    '/webhook_endpoints',
    {
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: "The calling account's webhook endpoints (experimental)",
        description: 'Pages of endpoints in ascending id order, never a secret.',
        ...experimental,
        querystring: ListEndpointsQuery,
        response: listEndpointsResponses,
      },
    },
    async (request, reply) => {
      const { limit = 20, cursor } = request.query
      const page = await endpoints.list(callerKeyOf(request).id, limit, cursor)
      if (page.nextCursor) {
        const base = publicUrlOf(config, request)
        reply.header('link', nextPageLink(base, '/webhook_endpoints', { limit }, page.nextCursor))
      }
      return page.items
    },
  )

  api.get(
    '/webhook_endpoints/:endpointId',
    {
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'One webhook endpoint (experimental)',
        description: "One of the calling account's endpoints, never its secret; another account's is a 404.",
        ...experimental,
        params: EndpointParams,
        response: getEndpointResponses,
      },
    },
    async (request) => endpoints.get(callerKeyOf(request).id, request.params.endpointId),
  )

  api.patch(
    '/webhook_endpoints/:endpointId',
    {
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Change a webhook endpoint (experimental)',
        description:
          'Changes `url`, `events`, `description` or `status` (`enabled`/`disabled`); needs a `write` key. ' +
          'Disabling ends its pending retries; re-enabling does not replay what was missed meanwhile.',
        ...experimental,
        params: EndpointParams,
        body: ref(WebhookEndpointPatch),
        response: updateEndpointResponses,
      },
    },
    async (request) => endpoints.patch(callerKeyOf(request).id, request.params.endpointId, request.body),
  )

  api.delete(
    '/webhook_endpoints/:endpointId',
    {
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint (experimental)',
        description: 'Nothing more is sent to it; needs a `write` key.',
        ...experimental,
        params: EndpointParams,
        response: deleteEndpointResponses,
      },
    },
    async (request, reply) => {
      await endpoints.remove(callerKeyOf(request).id, request.params.endpointId)
      return reply.code(204).send(null)
    },
  )

  api.post(
    '/webhook_endpoints/:endpointId/rotate_secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Replace a webhook endpoint's secret (experimental)",
        description:
          `A new secret, shown this once; needs a \`write\` key. For \`graceSeconds\` (default ${DEFAULT_GRACE_SECONDS}, at most ` +
          `${MAX_GRACE_SECONDS}) every delivery carries two signatures, by the new secret and by the old one.`,
        ...experimental,
        params: EndpointParams,
        body: ref(SecretRotation),
        response: rotateSecretResponses,
      },
      preValidation: emptyBodyAsObject,
    },
    async (request) =>
      endpoints.rotate(
        callerKeyOf(request).id,
        request.params.endpointId,
        request.body?.graceSeconds ?? DEFAULT_GRACE_SECONDS,
      ),
  )

  api.post(
    '/webhook_endpoints/:endpointId/test',
    {
      schema: {
        operationId: 'sendTestEvent',
        summary: 'Send a test event to a webhook endpoint (experimental)',
        description:
          'A `ping` event (`data.object` is `{endpointId}`) for this endpoint only, whatever it subscribes to, ' +
          'signed, retried and logged like any delivery; only the calling account sees it in the event log. ' +
          'Needs a `write` key and an enabled endpoint; an endpoint takes at most ' +
          `${TEST_EVENTS_PER_MINUTE} test events a minute.`,
        ...experimental,
        params: EndpointParams,
        response: sendTestEventResponses,
      },
    },
    async (request, reply) => {
      const eventId = await testEvents.send(callerKeyOf(request).id, request.params.endpointId)
      return reply.code(202).send({ eventId })
    },
  )

  api.get(
    '/webhook_endpoints/:endpointId/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'Attempts to deliver to a webhook endpoint (experimental)',
        description:
          'Every attempt, newest first; `status` keeps those of that status (`pending`: not made yet, `at` ' +
          'is when it is due). At most 1 KiB of each answer is kept; the log keeps 30 days.',
        ...experimental,
        params: EndpointParams,
        querystring: ListDeliveriesQuery,
        response: listDeliveriesResponses,
      },
    },
    async (request, reply) => {
      const { limit = 20, status, cursor } = request.query
      const { endpointId } = request.params
      const page = await eventLog.listDeliveries({
        apiKeyId: callerKeyOf(request).id,
        endpointId,
        limit,
        status,
        cursor,
      })
      if (page.nextCursor) {
        const path = `/webhook_endpoints/${endpointId}/deliveries`
        reply.header(
          'link',
          nextPageLink(publicUrlOf(config, request), path, { limit, status }, page.nextCursor),
        )
      }
      return page.items
    },
  )
}
