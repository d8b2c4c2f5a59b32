import type { PetstoreClient } from '@petstore/client'
import { useEffect, useRef } from 'preact/hooks'
import { DataTable } from './data-table.js'
import { formatNumber } from './format.js'
import { useLoad } from './load.js'
import { Problem } from './problem.js'
import { CLASSES, drawUsageChart, type UsageRow } from './usage-chart.js'

const DAYS = 30

/** Requests per UTC day for the last 30 days by status class (`GET /v1/usage`): a chart, and its numbers. */
export function UsageSection({ client }: { client: PetstoreClient }) {
  const usage = useLoad(() => client.usage({ days: DAYS }), 'usage')
  const rows = usage.data
  const totals = CLASSES.map((name) => (rows ?? []).reduce((sum, row) => sum + row[name], 0))
  const summary = `${CLASSES.map((name, index) => `${formatNumber(totals[index] ?? 0)} ${name}`).join(', ')} in the last ${DAYS} days`
  return (
    <section class="card" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <p>
        Requests per UTC day by status class. Counts reach this page within a minute of the requests.{' '}
        <button type="button" class="link" onClick={usage.reload}>
          Refresh
        </button>
      </p>
      <Problem error={usage.error} />
      {rows && totals.every((total) => total === 0) && (
        <p class="empty">
          No requests in the last {DAYS} days yet: call the API with this key and they appear here.
        </p>
      )}
      {rows && (
        <>
          <Chart rows={rows} label={`Bar chart: ${summary}.`} />
          <p class="summary" data-testid="usage-summary">
            {summary}.
          </p>
          <details>
            <summary>The numbers, day by day</summary>
            <UsageTable rows={rows} />
          </details>
        </>
      )}
    </section>
  )
}

function Chart({ rows, label }: { rows: UsageRow[]; label: string }) {
  const target = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (!target.current) return
    const chart = drawUsageChart(target.current, rows)
    return () => chart.destroy()
  }, [rows])
  return <div class="chart" ref={target} role="img" aria-label={label} />
}

function UsageTable({ rows }: { rows: UsageRow[] }) {
  return (
    <DataTable class="usage" caption="Requests per UTC day, newest first" columns={['Day (UTC)', ...CLASSES]}>
      {rows.map((row) => (
        <tr key={row.day} data-day={row.day}>
          <th scope="row">{row.day}</th>
          {CLASSES.map((name) => (
            <td key={name} data-class={name}>
              {formatNumber(row[name])}
            </td>
          ))}
        </tr>
      ))}
    </DataTable>
  )
}
