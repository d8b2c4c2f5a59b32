import Type from 'typebox'
import {
  BODY_ERRORS,
  COMMON_ERRORS,
  documented,
  errorResponse,
  INSUFFICIENT_SCOPE,
  invalidRequest,
  NEXT_PAGE_LINK,
  rateLimitedResponse,
} from '../http/error.schemas.js'
import { ref } from '../schema-ref.js'
import { TEST_EVENTS_PER_MINUTE } from './test-events.js'
import {
  DeliveryAttempts,
  Event,
  Events,
  MAX_GRACE_SECONDS,
  RedeliveryAccepted,
  TestEventAccepted,
  WebhookEndpoint,
  WebhookEndpoints,
  WebhookEndpointWithSecret,
} from './webhooks.schemas.js'

/** The documented responses of the webhook and event operations (CONTRACT §14), an example per error code. */

const endpointNotFound = errorResponse({
  not_found: {
    when: "the calling account has no endpoint with this id (another account's is not told apart)",
    message: 'webhook endpoint we_7 does not exist',
  },
})
const eventNotFound = errorResponse({
  not_found: {
    when: "no event with this id is visible to the calling account (another account's order, or older than 30 days)",
    message: 'event evt_0000000000000042 does not exist',
  },
})
const REFUSED_URL =
  'url: the host resolves to 169.254.169.254, a link-local address: webhook URLs must reach public addresses'

export const createEndpointResponses = {
  201: documented(
    ref(WebhookEndpointWithSecret),
    'The endpoint, with its signing secret (shown this once).',
    {
      Location: {
        type: 'string',
        description: 'Where to read the endpoint: `{base}/webhook_endpoints/{id}`.',
      },
    },
  ),
  400: invalidRequest(REFUSED_URL),
  403: INSUFFICIENT_SCOPE,
  409: errorResponse({
    conflict: {
      when: 'the account has 10 endpoints already (deleted ones do not count)',
      message: 'an account has at most 10 webhook endpoints: delete one first',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const listEndpointsResponses = {
  200: documented(ref(WebhookEndpoints), "A page of the calling account's endpoints.", NEXT_PAGE_LINK),
  400: invalidRequest('limit must be an integer from 1 to 100'),
  ...COMMON_ERRORS,
}

export const getEndpointResponses = {
  200: documented(ref(WebhookEndpoint), 'The endpoint (never its secret).'),
  400: invalidRequest('endpointId must be an endpoint id like we_12'),
  404: endpointNotFound,
  ...COMMON_ERRORS,
}

export const updateEndpointResponses = {
  200: documented(ref(WebhookEndpoint), 'The endpoint as changed.'),
  400: invalidRequest(REFUSED_URL),
  403: INSUFFICIENT_SCOPE,
  404: endpointNotFound,
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const deleteEndpointResponses = {
  204: documented(Type.Null(), 'Deleted: nothing more is sent to it.'),
  400: invalidRequest('endpointId must be an endpoint id like we_12'),
  403: INSUFFICIENT_SCOPE,
  404: endpointNotFound,
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const rotateSecretResponses = {
  200: documented(ref(WebhookEndpointWithSecret), 'The endpoint with its new secret (shown this once).'),
  400: invalidRequest(`graceSeconds must be an integer from 0 to ${MAX_GRACE_SECONDS}`),
  403: INSUFFICIENT_SCOPE,
  404: endpointNotFound,
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const sendTestEventResponses = {
  202: documented(ref(TestEventAccepted), 'The `ping` is on its way: its deliveries are in the log.'),
  400: invalidRequest('endpointId must be an endpoint id like we_12'),
  403: INSUFFICIENT_SCOPE,
  404: endpointNotFound,
  409: errorResponse({
    conflict: {
      when: 'the endpoint is disabled',
      message: 'webhook endpoint we_7 is disabled: enable it to send it a test event',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
  429: rateLimitedResponse({
    when: `the endpoint had ${TEST_EVENTS_PER_MINUTE} test events this minute`,
    message: `webhook endpoint we_7 takes at most ${TEST_EVENTS_PER_MINUTE} test events a minute; retry in 23 seconds`,
  }),
}

export const listDeliveriesResponses = {
  200: documented(ref(DeliveryAttempts), 'A page of attempts, newest first.', NEXT_PAGE_LINK),
  400: invalidRequest('status must be one of pending, succeeded, failed'),
  404: endpointNotFound,
  ...COMMON_ERRORS,
}

export const listEventsResponses = {
  200: documented(
    ref(Events),
    'A page of events in commit order (newest first with `order=desc`).',
    NEXT_PAGE_LINK,
  ),
  400: invalidRequest('cursor is not valid: follow the Link header of the previous page as it is'),
  ...COMMON_ERRORS,
}

export const getEventResponses = {
  200: documented(ref(Event), 'The event, as it is delivered.'),
  400: invalidRequest('eventId must be an event id like evt_0000000000000042'),
  404: eventNotFound,
  ...COMMON_ERRORS,
}

export const redeliverResponses = {
  202: documented(ref(RedeliveryAccepted), 'A new series of attempts (same `webhook-id`) is on its way.'),
  400: invalidRequest('endpointId must be an endpoint id like we_12'),
  403: INSUFFICIENT_SCOPE,
  404: eventNotFound,
  409: errorResponse({
    conflict: {
      when:
        "the endpoint named is disabled, or none of the account's enabled endpoints subscribes to the event, " +
        'or a `ping` is sent again to an endpoint other than the one it tests',
      message: 'none of your enabled webhook endpoints subscribes to order.placed',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}
