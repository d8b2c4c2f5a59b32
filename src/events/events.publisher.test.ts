import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { trace } from '@opentelemetry/api'
import { NodeSDK, tracing } from '@opentelemetry/sdk-node'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectDatabase } from '../db/connect.js'
import type { DbHandle } from '../db/handle.js'
import { migrateToLatest } from '../db/migrate.js'
import { currentTraceParent, useTracer } from '../tracing/tracing.js'
import { createEventRecorder, type NewEvent } from './events.publisher.js'

let dir: string
let handle: DbHandle
let sdk: NodeSDK

beforeAll(async () => {
  // The real SDK, spans kept in memory: the recorder reads the active span as the service's would.
  sdk = new NodeSDK({ traceExporter: new tracing.InMemorySpanExporter(), instrumentations: [] })
  sdk.start()
  useTracer(trace.getTracer('test'))
  dir = mkdtempSync(join(tmpdir(), 'petstore-events-'))
  handle = await connectDatabase({ kind: 'sqlite', path: join(dir, 'petstore.sqlite'), timeoutMs: 2000 })
  await migrateToLatest(handle.db)
})
afterAll(async () => {
  await handle.close()
  await sdk.shutdown()
  rmSync(dir, { recursive: true, force: true })
})

it('keeps each change’s own trace context in a group commit: none for a request sampled out, not the leader’s', async () => {
  const recorder = createEventRecorder(handle, () => 0)
  const event = (traceParent?: string | null): NewEvent => ({
    type: 'pet.created',
    accountId: null,
    resourceVersion: 1,
    object: {},
    ...(traceParent !== undefined && { traceParent }),
  })
  const captured = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
  // The group commit's span is the first caller's: a traced request's.
  const leader = await trace.getTracer('test').startActiveSpan('group commit', async (span) => {
    await handle.write((trx) => recorder.record(trx, [event(captured), event(null), event()]))
    span.end()
    return span.spanContext()
  })
  const rows = await handle.db.selectFrom('events').select('trace_parent').orderBy('seq').execute()
  expect(rows.map((row) => row.trace_parent)).toEqual([
    captured,
    null,
    `00-${leader.traceId}-${leader.spanId}-01`,
  ])
  expect(currentTraceParent()).toBeNull()
})
