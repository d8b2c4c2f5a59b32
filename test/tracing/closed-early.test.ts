import { connect } from 'node:net'
import { expect, test } from 'vitest'
import { parseResponse, sendRaw } from '../raw-http.js'
import type { ReceivedSpan } from './otlp-receiver.js'
import { tracedServices } from './traced-service.js'

/**
 * A request whose connection closes before its response is finished still gets its SERVER span, marked
 * with `error.type`: the real service, its spans at a real OTLP receiver.
 */

const traced = tracedServices('petstore-closed-early-')
const SERVER = 2

/** `count` listPets and then `last`, pipelined on one connection that is destroyed as soon as written. */
function pipelineAndDrop(port: number, key: string, last: string, count = 20): void {
  const socket = connect(port, '127.0.0.1', () => {
    let requests = ''
    for (let index = 0; index < count; index++)
      requests += `GET /v1/pets?limit=100&i=${index} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n\r\n`
    socket.write(`${requests}GET ${last} HTTP/1.1\r\nHost: x\r\n\r\n`)
    socket.destroy()
  })
  socket.on('error', () => {})
}

const serverSpanOf = (path: string) => (spans: ReceivedSpan[]) =>
  spans.find((span) => span.kind === SERVER && span.attributes['url.path'] === path)

test('a 404, and the OpenAPI document waiting for its turn, pipelined on a connection that drops: each gets its SERVER span', async () => {
  const receiver = await traced.receiver()
  const { service, key } = await traced.serve({
    LOG_LEVEL: 'info',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  })
  pipelineAndDrop(service.port, key, '/nope-pipelined')
  pipelineAndDrop(service.port, key, '/v1/openapi.json')
  // The OpenAPI document never answers: its span ends when the request is given up, 10 s after the close.
  const spans = await receiver.waitFor(
    (all) => [serverSpanOf('/nope-pipelined'), serverSpanOf('/v1/openapi.json')].every((of) => of(all)),
    30_000,
  )
  expect(serverSpanOf('/nope-pipelined')(spans)?.attributes).toMatchObject({
    'http.response.status_code': 404,
    'error.type': 'connection_closed',
  })
  const document = serverSpanOf('/v1/openapi.json')(spans)
  expect(document?.attributes['error.type']).toBe('connection_closed')
  expect(document?.attributes).not.toHaveProperty('http.response.status_code')
  // The listPets before them answered in full or not: their spans @fastify/otel ended, once each.
  expect(spans.filter((span) => span.name === 'GET /v1/pets')).toHaveLength(40)
  expect(service.stdout()).not.toMatch(/ended Span|only call end\(\)/)
}, 45_000)

test('a body that misses PETSTORE_REQUEST_TIMEOUT_MS: the span says 408, as the client read, and why', async () => {
  const receiver = await traced.receiver()
  const { service, key } = await traced.serve({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    PETSTORE_REQUEST_TIMEOUT_MS: '2000',
    PETSTORE_HEADERS_TIMEOUT_MS: '1000',
  })
  const head =
    'POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    `Authorization: Bearer ${key}\r\nContent-Length: 100\r\n\r\n`
  expect(parseResponse(await sendRaw(service.port, head, '{"name":')).status).toBe(408)
  const spans = await receiver.waitFor((all) => all.some((span) => span.name === 'POST /v1/pets'))
  expect(spans.find((span) => span.name === 'POST /v1/pets')?.attributes).toMatchObject({
    'http.response.status_code': 408,
    'error.type': 'request_timeout',
  })
})
