import type { Socket } from 'node:net'
import type { AppError } from './errors.js'

/** The answer Node's `clientError` handler (http/client-error.ts) wrote on a socket before closing it. */
const kAnswered = Symbol('petstore.clientError.answered')
type AnsweredSocket = Socket & { [kAnswered]?: AppError }

/** Keeps on `socket` the answer written on it, for the request Fastify may still be handling there. */
export function markAnswered(socket: Socket, answer: AppError): void {
  ;(socket as AnsweredSocket)[kAnswered] = answer
}

/**
 * What was answered on `socket` before it was closed (a request whose body did not arrive in time: 408
 * `request_timeout`), or undefined. The request cut short still fails in Fastify (its body stopped: a 400
 * sent nowhere); the error handler and its span record this answer instead, the one its client got.
 */
export function answeredOnSocket(socket: Socket | null | undefined): AppError | undefined {
  return (socket as AnsweredSocket | null | undefined)?.[kAnswered]
}
