import type { Context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'

/**
 * The SDK's context manager, switched off while nothing is traced. On Node 20 and 22, `AsyncLocalStorage`
 * runs on async hooks: from the first context entered, a hook runs for every promise the process makes,
 * traced or not. At 1 % sampling that cost the 99 requests outside a trace about as much as the traced one
 * (docs/observability.md). So the traced work holds the scope (a traced request from its first hook until
 * its work is done: request-sampling.ts; a sampled dispatcher span while it runs), and when the last hold is released the
 * storage is disabled: Node's `disable()` exits every context of it and, with no other storage, removes
 * the hooks. The next `with()` (the next traced request) enables it again (`run()` does).
 *
 * Work that does not hold the scope can lose its context when the last hold ends: code outside a traced
 * request or a sampled span then sees no active span, which is what it sees when nothing is traced.
 *
 * Where `AsyncLocalStorage` costs nothing while unused (Node 24 and later unless started with
 * `--no-async-context-frame`, and 22 with `--experimental-async-context-frame`: it rides on V8's
 * continuation data, no hooks), nothing is switched: hold and release change nothing.
 */
export interface ContextScope {
  /** The manager to give the SDK (`contextManager`). */
  readonly contextManager: AsyncLocalStorageContextManager
  /** Traced work starts: the storage stays on until it ends. */
  hold(): void
  /** Traced work ended: with nothing else held, the storage is disabled until a context is entered again. */
  release(): void
}

export function createContextScope(onAsyncHooks = storageOnAsyncHooks()): ContextScope {
  if (!onAsyncHooks) return { contextManager: new AsyncLocalStorageContextManager(), hold() {}, release() {} }
  let held = 0
  /**
   * A context entered while nothing is held (the batch exporter's, each export) enables the storage
   * too: it is disabled again once that call returns, if still nothing is held. What such a call goes
   * on to do asynchronously runs without its context (the exporter's suppression of tracing, which
   * only an HTTP instrumentation would read: the service has none).
   */
  class ScopedContextManager extends AsyncLocalStorageContextManager {
    override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
      context: Context,
      fn: F,
      thisArg?: ThisParameterType<F>,
      ...args: A
    ): ReturnType<F> {
      if (held > 0) return super.with(context, fn, thisArg, ...args)
      try {
        return super.with(context, fn, thisArg, ...args)
      } finally {
        if (held === 0) this.disable()
      }
    }
  }
  const contextManager = new ScopedContextManager()
  return {
    contextManager,
    hold() {
      held++
    },
    release() {
      if (held === 0) return
      held--
      if (held === 0) contextManager.disable()
    },
  }
}

/**
 * Whether this Node's `AsyncLocalStorage` runs on async hooks: before 24 unless
 * `--experimental-async-context-frame` is set, from 24 only with `--no-async-context-frame`.
 */
export function storageOnAsyncHooks(
  major = Number(process.versions.node.split('.')[0]),
  flags: readonly string[] = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)],
): boolean {
  // Node takes its flags with dashes or underscores alike.
  const set = new Set(flags.map((flag) => flag.replaceAll('_', '-')))
  return major >= 24 ? set.has('--no-async-context-frame') : !set.has('--experimental-async-context-frame')
}
