import { createServer, type IncomingHttpHeaders } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'

/** One span as the receiver decoded it (OTLP/protobuf or OTLP/JSON): ids in hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string
  spanId: string
  parentSpanId: string | undefined
  name: string
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number
  attributes: Record<string, unknown>
  links: { traceId: string; spanId: string }[]
  status: { code?: number; message?: string }
  startMs: number
  endMs: number
  service: string | undefined
  /** Its resource's attributes (service.name, OTEL_RESOURCE_ATTRIBUTES, the host and process). */
  resource: Record<string, unknown>
}

/** A real OTLP/HTTP trace receiver on a loopback port, as a collector would be. */
export interface OtlpReceiver {
  port: number
  url: string
  spans: ReceivedSpan[]
  /** Every request body as it came (JSON text, or protobuf bytes), to search for what must not be there. */
  raw: Buffer[]
  /** Every request's headers, in the same order. */
  headers: IncomingHttpHeaders[]
  /** Resolves with the spans once `matches` holds for them, or rejects after `timeoutMs`. */
  waitFor(matches: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>
  close(): Promise<void>
}

/** OTLP/JSON's AnyValue (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding). */
type AnyValue = {
  stringValue?: string
  boolValue?: boolean
  intValue?: string | number
  doubleValue?: number
  arrayValue?: { values?: AnyValue[] }
}
type KeyValue = { key: string; value: AnyValue }
type OtlpSpan = {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  startTimeUnixNano: string | number
  endTimeUnixNano: string | number
  attributes?: KeyValue[]
  links?: { traceId: string; spanId: string }[]
  status?: { code?: number; message?: string }
}
type ExportRequest = {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: { spans?: OtlpSpan[] }[]
  }[]
}

/**
 * OTLP's protobuf messages as the OpenTelemetry JS project compiled them (protobufjs), from
 * `@opentelemetry/otlp-transformer` 0.216.0 (a development dependency, `otlp-transformer-0.216`): the last
 * release whose messages include the trace service's. Later releases encode traces with a writer of their
 * own and decode nothing.
 */
interface Message<T> {
  decode(bytes: Uint8Array): unknown
  toObject(message: unknown, options: { longs: StringConstructor; bytes: StringConstructor }): T
  fromObject(object: T): unknown
  encode(message: unknown): { finish(): Uint8Array }
}

/** What a collector says of spans it took but rejected (OTLP's partial success). */
export interface PartialSuccess {
  rejectedSpans: number
  errorMessage: string
}
const { opentelemetry } = createRequire(import.meta.url)(
  'otlp-transformer-0.216/build/src/generated/root.js',
) as {
  opentelemetry: {
    proto: {
      collector: {
        trace: {
          v1: {
            ExportTraceServiceRequest: Message<ExportRequest>
            ExportTraceServiceResponse: Message<{ partialSuccess?: PartialSuccess }>
          }
        }
      }
    }
  }
}
const { ExportTraceServiceRequest, ExportTraceServiceResponse } = opentelemetry.proto.collector.trace.v1

/** A collector's answer in the request's encoding: empty, or with `partial` (int64 as a string in JSON). */
function responseBody(type: string, partial: PartialSuccess | undefined): string | Uint8Array {
  if (type.startsWith('application/json')) {
    if (!partial) return '{}'
    return JSON.stringify({ partialSuccess: { ...partial, rejectedSpans: String(partial.rejectedSpans) } })
  }
  const response = ExportTraceServiceResponse.fromObject(partial ? { partialSuccess: partial } : {})
  return ExportTraceServiceResponse.encode(response).finish()
}

/** An OTLP/protobuf export, decoded by the project's messages; ids (bytes, here base64) in hex as OTLP/JSON has them. */
function decodeProtobuf(body: Buffer): ExportRequest {
  const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
    longs: String,
    bytes: String,
  })
  const hex = (base64: string | undefined) => Buffer.from(base64 ?? '', 'base64').toString('hex')
  for (const resourceSpans of request.resourceSpans ?? [])
    for (const scope of resourceSpans.scopeSpans ?? [])
      for (const span of scope.spans ?? []) {
        span.traceId = hex(span.traceId)
        span.spanId = hex(span.spanId)
        span.parentSpanId = hex(span.parentSpanId)
        for (const link of span.links ?? [])
          Object.assign(link, { traceId: hex(link.traceId), spanId: hex(link.spanId) })
      }
  return request
}

function plainValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return value.doubleValue
  return value.arrayValue?.values?.map(plainValue)
}

const attributesOf = (list: KeyValue[] = []) =>
  Object.fromEntries(list.map(({ key, value }) => [key, plainValue(value)]))

function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes)
    const service = resource['service.name'] as string | undefined
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId || undefined,
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        status: span.status ?? {},
        startMs: Number(BigInt(span.startTimeUnixNano) / 1_000_000n),
        endMs: Number(BigInt(span.endTimeUnixNano) / 1_000_000n),
        service,
        resource,
      })),
    )
  })
}

/**
 * Takes `POST /v1/traces` in OTLP/protobuf (decoded by the OpenTelemetry project's messages, above) or
 * OTLP/JSON, and answers as a collector does (200, an empty ExportTraceServiceResponse, or one with
 * `partial`). `answer` can make it refuse (a collector that is down or full).
 */
export async function startOtlpReceiver(
  answer: () => number = () => 200,
  partial?: PartialSuccess,
): Promise<OtlpReceiver> {
  const waiters = new Set<() => void>()
  const receiver = { spans: [], raw: [], headers: [] } as unknown as OtlpReceiver
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks)
      const type = request.headers['content-type'] ?? ''
      receiver.raw.push(body)
      receiver.headers.push(request.headers)
      if (request.url === '/v1/traces' && type.startsWith('application/json')) {
        receiver.spans.push(...spansOf(JSON.parse(body.toString('utf8')) as ExportRequest))
      } else if (request.url === '/v1/traces' && type.startsWith('application/x-protobuf')) {
        receiver.spans.push(...spansOf(decodeProtobuf(body)))
      }
      for (const wake of waiters) wake()
      const status = answer()
      response.writeHead(status, { 'content-type': type || 'application/json' })
      response.end(status === 200 ? responseBody(type, partial) : '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  receiver.port = port
  receiver.url = `http://127.0.0.1:${port}`
  receiver.waitFor = (matches, timeoutMs = 15_000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!matches(receiver.spans)) return
        waiters.delete(check)
        clearTimeout(timer)
        resolve(receiver.spans)
      }
      const timer = setTimeout(() => {
        waiters.delete(check)
        reject(new Error(`no matching spans within ${timeoutMs} ms; got ${names(receiver.spans)}`))
      }, timeoutMs)
      waiters.add(check)
      check()
    })
  receiver.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return receiver
}

const names = (spans: ReceivedSpan[]) => [...new Set(spans.map((span) => span.name))].join(', ')

/** The spans of one trace whose parent is `parent` (the tree's next level). */
export const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
  spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId)

/** Every span under `root`, at any depth. */
export function descendantsOf(spans: ReceivedSpan[], root: ReceivedSpan): ReceivedSpan[] {
  const below = childrenOf(spans, root)
  return below.flatMap((child) => [child, ...descendantsOf(spans, child)])
}
