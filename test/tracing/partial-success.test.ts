import { expect, test } from 'vitest'
import { get, logLine } from '../service-process.js'
import { tracedServices } from './traced-service.js'

/**
 * A collector that takes a batch but rejects part of it (OTLP's partial success): the exporter calls the
 * export a success and only warns, so the service counts the rejected spans from that warning, in
 * `petstore_trace_spans_dropped_total{reason="rejected"}`, in either encoding.
 */

const traced = tracedServices('petstore-partial-')

test.each(['http/protobuf', 'http/json'])(
  '%s: the spans a collector rejects are counted as rejected, and its reason logged',
  async (protocol) => {
    const receiver = await traced.receiver(() => 200, { rejectedSpans: 3, errorMessage: 'spans too old' })
    const { service, listPets } = await serve(receiver.url, protocol)
    for (let index = 0; index < 5; index++) expect((await listPets()).status).toBe(200)
    await expect.poll(() => receiver.raw.length, { timeout: 10_000 }).toBeGreaterThan(0)
    const rejected = async () => (await dropped(service.port)).rejected ?? 0
    await expect.poll(rejected, { timeout: 10_000, interval: 200 }).toBeGreaterThan(0)
    const counts = await dropped(service.port)
    // Each answer rejects 3: the count is 3 per export answered so far, and nothing counts as failed.
    expect((counts.rejected ?? 0) % 3).toBe(0)
    expect(counts.export_failed).toBe(0)
    const warning = await logLine(service, (line) => String(line.tracing).includes('spans too old'))
    expect(warning).toMatchObject({ level: 40, msg: 'tracing: Received Partial Success response:' })
  },
)

function serve(url: string, protocol: string) {
  return traced.serve({ OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_EXPORTER_OTLP_PROTOCOL: protocol })
}

/** `/metrics`' dropped spans by reason, for those it shows. */
async function dropped(port: number): Promise<Record<string, number>> {
  const { body } = await get(port, '/metrics')
  const counts: Record<string, number> = {}
  for (const [, reason = '', count] of body.matchAll(
    /petstore_trace_spans_dropped_total\{reason="(\w+)"\} (\d+)/g,
  ))
    counts[reason] = Number(count)
  return counts
}
