import type { ServerResponse } from 'node:http'
import type { Span } from '@opentelemetry/api'
import type { FastifyRequest } from 'fastify'
import { answeredOnSocket } from '../answered-socket.js'
import type { ContextScope } from './context-scope.js'

/** A traced request's part of its hold on the context scope that ends when its answer is being sent. */
const kAnswered = Symbol('petstore.tracing.answered')
type Answered = FastifyRequest & { [kAnswered]?: () => void }

/** Called from the first onSend hook: the request's answer is being sent (its status is decided). */
export function answering(request: FastifyRequest): void {
  ;(request as Answered)[kAnswered]?.()
}

/**
 * `error.type` of a request whose connection closed before its response was finished: a value of the
 * service's own, as the HTTP semantic conventions ask when none of theirs applies (theirs is `_OTHER`).
 */
export const CONNECTION_CLOSED = 'connection_closed'

/**
 * Holds `scope` until the request's work is done, which is the later of its answer being sent (its
 * handler and error handler have run: a client that hung up does not cut its handler's context short,
 * so what a write commits after it still carries the trace) and its response closing, or its connection
 * (on Node 20 a pipelined response still queued behind another never emits 'close' when its connection
 * drops: http/pipelining.ts). A request that never answers (one that waited for its turn on a connection
 * that closed: `whenWritable`) lets go `abandonAfterMs` after the close.
 *
 * A connection that closes before the response finished would also leave the request's SERVER span open
 * for ever where @fastify/otel ends it only once the response is finished (a 404's, a 405's, a 401 of an
 * unknown path: its not-found handler's `onResponse`), or where the request never answers: that span is
 * ended here (`markClosedEarly`). A route's span @fastify/otel ends in the route's last `onSend` hook, which
 * runs right after `answering`: it is only marked.
 */
export function holdUntilDone(
  scope: Pick<ContextScope, 'hold' | 'release'>,
  request: FastifyRequest,
  response: ServerResponse,
  abandonAfterMs: number,
): void {
  scope.hold()
  const socket = request.raw.socket
  let closed = false
  let answered = false
  const releaseWhenDone = () => {
    if (closed && answered) scope.release()
  }
  // Once: a connection's 'close' closes the response too, and an emitter calls the listeners it had
  // when the event began, so this may be called again after it took itself off.
  const answer = (abandoned: boolean) => {
    if (answered) return
    answered = true
    if ((closed || socket?.destroyed) && !response.writableFinished) {
      const status = abandoned ? undefined : response.statusCode
      markClosedEarly(request, { end: abandoned || request.is404, status })
    }
    releaseWhenDone()
  }
  const close = () => {
    if (closed) return
    closed = true
    socket?.off('close', close)
    response.off('close', close)
    if (!answered) setTimeout(() => answer(true), abandonAfterMs).unref()
    else if (!response.writableFinished) markClosedEarly(request, { end: true, status: response.statusCode })
    releaseWhenDone()
  }
  ;(request as Answered)[kAnswered] = () => answer(false)
  response.once('close', close)
  socket?.once('close', close)
}

/**
 * Marks the request's SERVER span, if @fastify/otel has one open, with `error.type`; with `end`, ends it
 * too, with the status its answer had (one that never answered has none). A handler that still answers
 * after `abandonAfterMs` finds its span ended: the SDK warns of it.
 */
function markClosedEarly(request: FastifyRequest, { end, status }: { end: boolean; status?: number }): void {
  const span: Span | null = typeof request.opentelemetry === 'function' ? request.opentelemetry().span : null
  if (!span?.isRecording()) return
  // The service's error code when it answered on the socket itself (408 `request_timeout`).
  span.setAttribute('error.type', answeredOnSocket(request.raw.socket)?.code ?? CONNECTION_CLOSED)
  if (!end) return
  if (status !== undefined) span.setAttribute('http.response.status_code', status)
  span.end()
}
