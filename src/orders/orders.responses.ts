import {
  BODY_ERRORS,
  COMMON_ERRORS,
  documented,
  errorResponse,
  INSUFFICIENT_SCOPE,
  invalidRequest,
  NEXT_PAGE_LINK,
} from '../http/error.schemas.js'
import { IDEMPOTENCY_MESSAGES, IDEMPOTENT_REPLAYED_HEADER } from '../idempotency/idempotency.js'
import { ref } from '../schema-ref.js'
import { Inventory, Order, Orders } from './orders.schemas.js'

/** The documented responses of the store's operations (orders.routes.ts), with an example per error code. */

const NOT_FOUND = errorResponse({
  not_found: { when: 'the calling account has no order with this id', message: 'order 7 does not exist' },
})

export const placeOrderResponses = {
  201: documented(ref(Order), 'The order, `placed`.', {
    ...IDEMPOTENT_REPLAYED_HEADER,
    Location: { type: 'string', description: 'Where to read the order: `{base}/store/orders/{id}`.' },
  }),
  400: invalidRequest('petId is required'),
  403: INSUFFICIENT_SCOPE,
  // No idempotency_key_in_use: the claim and the order commit together, so a concurrent retry waits for
  // the first and gets its order back (orders.service.ts).
  409: errorResponse({
    pet_unavailable: {
      when: 'the animal is not available (or does not exist)',
      message: 'pet 42 is pending: only an available pet can be ordered',
    },
  }),
  ...BODY_ERRORS,
  422: errorResponse({
    idempotency_key_reused: {
      when: 'the Idempotency-Key was used with another request',
      message: IDEMPOTENCY_MESSAGES.idempotency_key_reused,
    },
  }),
  ...COMMON_ERRORS,
}

export const listOrdersResponses = {
  200: documented(ref(Orders), 'A page of orders in ascending id order.', NEXT_PAGE_LINK),
  400: invalidRequest('limit must be an integer from 1 to 100'),
  ...COMMON_ERRORS,
}

export const getOrderResponses = {
  200: documented(ref(Order), 'The order.'),
  400: invalidRequest('orderId must be an integer from 1 to 9007199254740991'),
  404: NOT_FOUND,
  ...COMMON_ERRORS,
}

export const updateOrderResponses = {
  200: documented(ref(Order), 'The order as changed.'),
  400: invalidRequest('status must be one of placed, approved, delivered, cancelled'),
  403: INSUFFICIENT_SCOPE,
  404: NOT_FOUND,
  409: errorResponse({
    invalid_transition: {
      when: 'the order cannot move there from its status (named)',
      message: 'order 7 is delivered: it cannot become cancelled',
    },
  }),
  ...BODY_ERRORS,
  ...COMMON_ERRORS,
}

export const inventoryResponses = {
  200: documented(ref(Inventory), 'Counts over all animals.'),
  ...COMMON_ERRORS,
}
