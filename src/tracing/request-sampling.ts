import type { IncomingHttpHeaders } from 'node:http'
import {
  type Attributes,
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  type TextMapGetter,
  TraceFlags,
  trace,
} from '@opentelemetry/api'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  type Sampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TracingConfig } from '../config.js'
import type { ContextScope } from './context-scope.js'
import { answering, holdUntilDone } from './request-hold.js'

/** The sampler OTEL_TRACES_SAMPLER names (config.ts has checked it and its argument), the SDK's own. */
export function samplerOf(config: Pick<TracingConfig, 'sampler' | 'ratio'>): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.ratio)
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler()
    case 'always_off':
      return new AlwaysOffSampler()
    case 'traceidratio':
      return ratio()
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() })
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() })
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() })
  }
}

/**
 * `sampler`, but a span linked to a sampled one is sampled too: the dispatcher's spans (a webhook attempt,
 * a fan-out) start traces of their own, linked to the change that emitted the event, so every attempt of
 * a change that was traced is kept whatever the ratio. The other spans are `sampler`'s to decide.
 */
export function followingLinks(sampler: Sampler): Sampler {
  return {
    shouldSample(
      parent: Context,
      traceId: string,
      name: string,
      kind: SpanKind,
      attributes: Attributes,
      links: Link[],
    ) {
      const linkedToSampled = links.some((link) => (link.context.traceFlags & TraceFlags.SAMPLED) !== 0)
      if (linkedToSampled) return { decision: SamplingDecision.RECORD_AND_SAMPLED }
      return sampler.shouldSample(parent, traceId, name, kind, attributes, links)
    },
    toString: () => `FollowingLinks{${sampler.toString()}}`,
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The trace id of a request that is not traced (sampled out), for its access log line; else null. */
    untracedTraceId: string | null
  }
}

/**
 * How long a traced request whose connection closed may still run without answering (its handler's
 * statements after a hang-up): after it, one that never answers stops holding the context scope.
 */
const ABANDON_AFTER_MS = 10_000

/**
 * Head sampling at the door. Whether a request is traced is decided in its first hook, by the same sampler
 * the SDK has, on the same inputs (the caller's trace, from the headers OTEL_PROPAGATORS reads, else a new
 * trace id); a request sampled out is then ignored by @fastify/otel, which makes no span, context or hook
 * work for it. Without this, @fastify/otel starts a non-recording span for each and runs the request inside
 * its context: at 1% sampling that was about 15 of the 38 µs of CPU tracing added to a listPets
 * (docs/observability.md).
 *
 * The decision reaches @fastify/otel through two hand-offs that rely on Fastify running a request's
 * `onRequest` hooks in order, each synchronously after the one before (ours first, then @fastify/otel's,
 * which asks `ignores` and then starts its span):
 * - `ignores()` answers for the request `decide` has just seen (and, asked at any other time, for a
 *   route being registered or a 404 handler being run);
 * - `idGenerator` gives that span the trace id the decision was made on (a request without a caller's
 *   trace), so the SDK's sampler, asked again, answers the same and a `traceidratio` decision
 *   stays consistent with the id downstream services see.
 * If either hand-off missed, the SDK's sampler would still decide alone: a request would at worst be
 * traced as if this gate were not there, or not at all.
 */
export class RequestSampling {
  readonly idGenerator: IdGenerator
  private readonly ids = new RandomIdGenerator()
  /** Whether the request just decided is traced, until `ignores` is asked about it; else undefined. */
  private pending: boolean | undefined
  /** Whether requests are being served: routes are registered before the first. */
  private serving = false
  /** The trace id its span is to have (a request with no caller's trace); taken by the next root span. */
  private nextTraceId: string | undefined
  /** The headers that may carry a caller's trace (`traceHeadersRead`); undefined: any may. */
  private traceHeaders: readonly string[] | undefined = []

  /**
   * `untraced(url)`: requests never traced whatever the sampler says (the probes, /metrics); `scope`: held
   * by each traced request until its work is done (context-scope.ts); `abandonAfterMs`: how long after its
   * connection closed a request that never answered still holds it.
   */
  constructor(
    private readonly sampler: Sampler,
    private readonly untraced: (url: string) => boolean,
    private readonly scope?: Pick<ContextScope, 'hold' | 'release'>,
    private readonly abandonAfterMs = ABANDON_AFTER_MS,
  ) {
    this.idGenerator = {
      generateTraceId: () => {
        const traceId = this.nextTraceId ?? this.ids.generateTraceId()
        this.nextTraceId = undefined
        return traceId
      },
      generateSpanId: () => this.ids.generateSpanId(),
    }
  }

  /**
   * Registers `decide` as the app's first onRequest hook, and the end of a traced request's work as an
   * onSend hook; call it before @fastify/otel's plugin registers.
   */
  register(app: FastifyInstance): void {
    // The SDK has set the propagator OTEL_PROPAGATORS names by now (sdk.ts starts it first).
    this.traceHeaders = traceHeadersRead()
    app.decorateRequest('untracedTraceId', null)
    app.addHook('onRequest', (request, reply, done) => {
      this.decide(request)
      if (this.pending && this.scope) holdUntilDone(this.scope, request, reply.raw, this.abandonAfterMs)
      done()
    })
    app.addHook('onSend', (request, _reply, payload, done) => {
      answering(request)
      done(null, payload)
    })
  }

  /** @fastify/otel's `ignorePaths`, asked when a route registers and when a request starts. */
  ignores(url: string): boolean {
    if (this.untraced(url)) return true
    const traced = this.pending
    this.pending = undefined
    if (traced !== undefined) return !traced
    // Asked outside a request's first hooks: a route registering (wired: every route can be traced), or
    // once serving, a 404 handler starting (a span only under its request's, never a root of its own).
    return this.serving && trace.getSpan(context.active()) === undefined
  }

  private decide(request: FastifyRequest): void {
    this.serving = true
    this.pending = undefined
    if (this.untraced(request.url)) return
    const parent = carriesTrace(request.headers, this.traceHeaders)
      ? propagation.extract(ROOT_CONTEXT, request.headers)
      : ROOT_CONTEXT
    const callerTraceId = trace.getSpanContext(parent)?.traceId
    const traceId = callerTraceId ?? this.ids.generateTraceId()
    const { decision } = this.sampler.shouldSample(parent, traceId, 'request', SpanKind.SERVER, {}, [])
    this.pending = decision !== SamplingDecision.NOT_RECORD
    if (!this.pending) request.untracedTraceId = traceId
    else if (callerTraceId === undefined) this.nextTraceId = traceId
  }
}

/**
 * The headers the global propagator (OTEL_PROPAGATORS) reads to find a caller's trace, learnt once by
 * asking it to extract from no headers: a request with none of them carries no trace and is not asked.
 * Not `propagation.fields()`, what a propagator writes: `b3` writes `b3` but reads `x-b3-*` too.
 * Undefined when the propagator lists every header (`jaeger`, for its baggage): every request is asked.
 */
export function traceHeadersRead(): readonly string[] | undefined {
  const read = new Set<string>()
  let listsHeaders = false
  const getter: TextMapGetter<object> = {
    get: (_carrier, name) => {
      read.add(name)
      return undefined
    },
    keys: () => {
      listsHeaders = true
      return []
    },
  }
  propagation.extract(ROOT_CONTEXT, {}, getter)
  return listsHeaders ? undefined : [...read]
}

/** Whether a request has any of `names` (undefined: any header may carry a trace). */
function carriesTrace(headers: IncomingHttpHeaders, names: readonly string[] | undefined): boolean {
  if (names === undefined) return true
  for (const name of names) if (headers[name] !== undefined) return true
  return false
}
