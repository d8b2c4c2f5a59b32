/**
 * The one error model of the service. Error codes are public API: each maps to exactly one HTTP
 * status here, and the OpenAPI document lists them.
 */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_key_in_use: 409,
  conflict: 409,
  pet_unavailable: 409,
  invalid_transition: 409,
  gone: 410,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  idempotency_key_reused: 422,
  header_too_large: 431,
  rate_limited: 429,
  key_banned: 429,
  internal_error: 500,
  unavailable: 503,
} as const

export type ErrorCode = keyof typeof ERROR_STATUS

/** The `Retry-After` of a 503 `unavailable`: the database may answer again a second later. */
export const UNAVAILABLE_RETRY_AFTER_S = 1

export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[]

/**
 * An error a client can act on. `message` is one sentence for a person; `headers` go on the response
 * (for example `Retry-After` or `WWW-Authenticate`).
 *
 * @example throw new AppError('not_found', 'pet 42 does not exist')
 */
export class AppError extends Error {
  readonly status: number

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message)
    this.name = 'AppError'
    this.status = ERROR_STATUS[code]
  }
}
