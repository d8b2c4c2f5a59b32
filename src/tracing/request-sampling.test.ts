import { connect } from 'node:net'
import { context, propagation } from '@opentelemetry/api'
import { NodeSDK } from '@opentelemetry/sdk-node'
import { AlwaysOffSampler, AlwaysOnSampler, type Sampler } from '@opentelemetry/sdk-trace-base'
import Fastify from 'fastify'
import { expect, it, vi } from 'vitest'
import { whenWritable } from '../http/pipelining.js'
import { RequestSampling, samplerOf } from './request-sampling.js'

/**
 * A real server whose route `/slow` answers when told to, with `sampler` deciding at its door; `/queued`
 * starts nothing until its response owns the socket, as the docs page does (http/pipelining.ts).
 */
async function serverDecidingBy(sampler: Sampler, abandonAfterMs?: number) {
  const scope = {
    held: 0,
    holds: 0,
    hold: () => {
      scope.held++
      scope.holds++
    },
    release: () => scope.held--,
  }
  const app = Fastify()
  new RequestSampling(sampler, (url) => url === '/healthz', scope, abandonAfterMs).register(app)
  let answer: () => void = () => {}
  const answered = new Promise<void>((resolve) => {
    answer = resolve
  })
  app.get('/slow', async () => {
    await answered
    return { ok: true }
  })
  app.get('/healthz', async () => ({ ok: true }))
  app.get('/untraced', async (request) => ({ traceId: request.untracedTraceId }))
  app.get('/queued', { onRequest: (_request, reply, done) => whenWritable(reply, done) }, async () => ({
    ok: true,
  }))
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, scope, address, answer }
}

it('a traced request holds the context scope from its first hook until its response closes', async () => {
  const { app, scope, address, answer } = await serverDecidingBy(new AlwaysOnSampler())
  try {
    const response = fetch(`${address}/slow`)
    await vi.waitFor(() => expect(scope.held).toBe(1))
    answer()
    expect((await response).status).toBe(200)
    await vi.waitFor(() => expect(scope.held).toBe(0))
    // The probes are never traced, so they hold nothing.
    await fetch(`${address}/healthz`)
    expect(scope.holds).toBe(1)
  } finally {
    await app.close()
  }
})

it('a traced request whose client hangs up holds the scope until its handler has answered, and releases it once', async () => {
  const { app, scope, address, answer } = await serverDecidingBy(new AlwaysOnSampler())
  try {
    const hangUp = new AbortController()
    const response = fetch(`${address}/slow`, { signal: hangUp.signal }).catch(() => undefined)
    await vi.waitFor(() => expect(scope.held).toBe(1))
    hangUp.abort()
    await response
    // The handler still runs (a write it commits carries the trace): its context must stay on.
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(scope.held).toBe(1)
    answer()
    // The response's 'close' and its connection's both came: one release, never a count below 0.
    await vi.waitFor(() => expect(scope.held).toBe(0))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(scope.held).toBe(0)
  } finally {
    await app.close()
  }
})

it('a request sampled out holds nothing', async () => {
  const { app, scope, address, answer } = await serverDecidingBy(new AlwaysOffSampler())
  try {
    answer()
    expect((await fetch(`${address}/slow`)).status).toBe(200)
    expect(scope.holds).toBe(0)
  } finally {
    await app.close()
  }
})

it('a traced request that never answers (it waited for its turn on a connection that closed) lets go soon after', async () => {
  const { app, scope, address, answer } = await serverDecidingBy(new AlwaysOnSampler(), 300)
  try {
    const socket = connect(Number(new URL(address).port), '127.0.0.1')
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /queued HTTP/1.1\r\nHost: x\r\n\r\n')
    await vi.waitFor(() => expect(scope.held).toBe(2))
    socket.destroy()
    // The server sees the close before /slow answers (else /queued would get the socket and answer).
    await new Promise((resolve) => setTimeout(resolve, 100))
    answer()
    // /slow answered; /queued never will: it stops holding the scope 300 ms after the close.
    await vi.waitFor(() => expect(scope.held).toBe(0), { timeout: 2_000 })
  } finally {
    await app.close()
  }
})

it.each(['b3multi', 'b3'])(
  'with OTEL_PROPAGATORS=%s the door decides on the caller’s B3 trace (x-b3-* headers)',
  async (propagators) => {
    // The propagator the SDK builds from OTEL_PROPAGATORS (`b3` writes one header, reads both forms).
    vi.stubEnv('OTEL_PROPAGATORS', propagators)
    const sdk = new NodeSDK({ spanProcessors: [], instrumentations: [] })
    sdk.start()
    const { app, scope, address } = await serverDecidingBy(
      samplerOf({ sampler: 'parentbased_traceidratio', ratio: 0 }),
    )
    try {
      const traceId = '80f198ee56343ba864fe8b2a57d3eff7'
      const caller = (sampled: string) => ({
        'x-b3-traceid': traceId,
        'x-b3-spanid': 'e457b5a2e4d86bd1',
        'x-b3-sampled': sampled,
      })
      // The caller kept its trace: so does the service, whatever its ratio.
      const kept = await fetch(`${address}/untraced`, { headers: caller('1') })
      expect(await kept.json()).toEqual({ traceId: null })
      expect(scope.holds).toBe(1)
      // The caller dropped it: not traced, and the access log's trace id is the caller's.
      const dropped = await fetch(`${address}/untraced`, { headers: caller('0') })
      expect(await dropped.json()).toEqual({ traceId })
      expect(scope.holds).toBe(1)
    } finally {
      await app.close()
      await sdk.shutdown()
      propagation.disable()
      context.disable()
      vi.unstubAllEnvs()
    }
  },
)
