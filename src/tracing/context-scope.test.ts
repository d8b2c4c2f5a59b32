import { executionAsyncId } from 'node:async_hooks'
import { createContextKey, ROOT_CONTEXT } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { createContextScope, storageOnAsyncHooks } from './context-scope.js'

const key = createContextKey('petstore.test')
const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('storageOnAsyncHooks', () => {
  it('is true before Node 24 unless the frame flag is set, and from 24 only with the flag that turns frames off', () => {
    expect(storageOnAsyncHooks(20, [])).toBe(true)
    expect(storageOnAsyncHooks(22, ['--max-semi-space-size=4'])).toBe(true)
    expect(storageOnAsyncHooks(22, ['--experimental-async-context-frame'])).toBe(false)
    expect(storageOnAsyncHooks(24, [])).toBe(false)
    expect(storageOnAsyncHooks(26, [])).toBe(false)
    expect(storageOnAsyncHooks(24, ['--no-async-context-frame'])).toBe(true)
    expect(storageOnAsyncHooks(22, ['--experimental_async_context_frame'])).toBe(false)
  })
})

describe.runIf(storageOnAsyncHooks())('a context scope on async hooks', () => {
  it('keeps a held context across awaits while any hold remains, and drops it and the promise hooks at the last release', async () => {
    const scope = createContextScope()
    const traced = ROOT_CONTEXT.setValue(key, 'traced')
    scope.hold()
    scope.hold()
    await scope.contextManager.with(traced, async () => {
      await tick()
      expect(scope.contextManager.active()).toBe(traced)
      scope.release()
      await tick()
      expect(scope.contextManager.active()).toBe(traced)
      scope.release()
      await tick()
      expect(scope.contextManager.active()).toBe(ROOT_CONTEXT)
      // No hook tracks promises any more: a reaction runs with no async id of its own.
      expect(await Promise.resolve().then(() => executionAsyncId())).toBe(0)
    })
  })

  it('is enabled again by the next context entered after the last release', async () => {
    const scope = createContextScope()
    scope.hold()
    await scope.contextManager.with(ROOT_CONTEXT.setValue(key, 'first'), async () => {
      scope.release()
      await tick()
      expect(scope.contextManager.active()).toBe(ROOT_CONTEXT)
    })
    const next = ROOT_CONTEXT.setValue(key, 'next')
    scope.hold()
    await scope.contextManager.with(next, async () => {
      await tick()
      expect(scope.contextManager.active()).toBe(next)
    })
    scope.release()
  })

  it('disables the storage again after a context entered while nothing is held (the exporter’s)', async () => {
    const scope = createContextScope()
    const exporting = ROOT_CONTEXT.setValue(key, 'export')
    scope.contextManager.with(exporting, () => expect(scope.contextManager.active()).toBe(exporting))
    expect(await Promise.resolve().then(() => executionAsyncId())).toBe(0)
  })

  it('a release without a hold changes nothing', async () => {
    const scope = createContextScope()
    scope.release()
    scope.hold()
    const traced = ROOT_CONTEXT.setValue(key, 'traced')
    await scope.contextManager.with(traced, async () => {
      await tick()
      expect(scope.contextManager.active()).toBe(traced)
    })
    scope.release()
  })
})

it('switches nothing where the storage has no hooks to remove', async () => {
  const scope = createContextScope(false)
  const traced = ROOT_CONTEXT.setValue(key, 'traced')
  scope.hold()
  await scope.contextManager.with(traced, async () => {
    scope.release()
    await tick()
    expect(scope.contextManager.active()).toBe(traced)
  })
})
