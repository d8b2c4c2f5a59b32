import type { Attributes } from '@opentelemetry/api'
import type { LogEvent } from 'kysely'
import { createBoundedMap } from '../bounded-map.js'
import { inSpan, inSpanSync, insideSpan, SpanKind, spanOfPast, tracingEnabled } from '../tracing/tracing.js'

/** `db.system.name` as OpenTelemetry's semantic conventions spell the two databases. */
export type DatabaseSystem = 'sqlite' | 'postgresql'

/**
 * One span per SQL statement, when tracing is on: its text as compiled (every value is a parameter, so no
 * value is ever in it), named `SELECT pets` style. Kysely's statements are reported by its `log` hook once
 * they end (`querySpans`); the handle's prepared statements go through `tracedRead` (PostgreSQL's reads)
 * and `tracedSync` (SQLite's; a prepared write run for many rows is one span, `db.operation.batch.size`).
 * Only inside another span (a request's, the fan-out's): the dispatcher's polling makes no trace.
 */
export function querySpans(system: DatabaseSystem): ((event: LogEvent) => void) | undefined {
  if (!tracingEnabled()) return undefined
  return (event) => {
    if (!insideSpan()) return
    const { sql } = event.query
    const error = event.level === 'error' ? event.error : undefined
    spanOfPast(nameOf(sql), event.queryDurationMillis, attributesOf(system, sql), error)
  }
}

export function tracedRead<T>(system: DatabaseSystem, sql: string, read: () => Promise<T>): Promise<T> {
  if (!insideSpan()) return read()
  return inSpan(nameOf(sql), attributesOf(system, sql), read, { kind: SpanKind.CLIENT })
}

/** `runs`: how many times the statement runs in the span (`db.operation.batch.size` when more than one). */
export function tracedSync<T>(system: DatabaseSystem, sql: string, run: () => T, runs = 1): T {
  if (!insideSpan()) return run()
  const attributes = attributesOf(system, sql)
  if (runs > 1) attributes['db.operation.batch.size'] = runs
  return inSpanSync(nameOf(sql), attributes, run)
}

const OPERATION = /^\s*(\w+)/
const TABLE = /\b(?:from|into|update|join)\s+"?(\w+)"?/i
/** Distinct statements are few (all parameterised): their names are worked out once. */
const names = createBoundedMap<string, string>(500)

function nameOf(sql: string): string {
  let name = names.get(sql)
  if (name === undefined) {
    const operation = (OPERATION.exec(sql)?.[1] ?? 'SQL').toUpperCase()
    const table = TABLE.exec(sql)?.[1]
    name = names.set(sql, table ? `${operation} ${table}` : operation)
  }
  return name
}

function attributesOf(system: DatabaseSystem, sql: string): Attributes {
  return { 'db.system.name': system, 'db.query.text': sql }
}
