import { cpus, totalmem } from 'node:os'

export interface Row {
  name: string
  requestsPerSec: number
  p50Ms: number
  p99Ms: number
  rssMB: number
  ratioToCeiling: number
  /** Responses other than 2xx, errors or timeouts during the row: reported, never hidden. */
  failures: number
  /** CPU time per request of each part (the service, and the database and Redis where measured), µs. */
  cpuMicroseconds?: Record<string, number>
  note?: string
}

export function machine() {
  return {
    cores: cpus().length,
    cpu: cpus()[0]?.model ?? 'unknown',
    memoryGB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    date: new Date().toISOString(),
  }
}

export type Target = {
  label: string
  value: (rows: Map<string, Row>) => number | undefined
  goal: number
  atMost?: boolean
}

const ratio = (a?: Row, b?: Row) =>
  a && b && b.requestsPerSec > 0 ? a.requestsPerSec / b.requestsPerSec : undefined

export const versus = (row: string, baseline: string, goal: number): Target => ({
  label: `${row} / ${baseline} (requests/s)`,
  value: (r) => ratio(r.get(row), r.get(baseline)),
  goal,
})

/** The targets of the hot-path issue, computed from the rows of the same run. */
const TARGETS: Target[] = [
  versus('listPets-limit20', 'naive-list', 1.2),
  versus('getPet', 'naive-get', 1.2),
  versus('createPet', 'naive-create', 1.2),
  versus('listPets-mixed', 'naive-list', 0.8),
  versus('listPets-limit20', 'json-server-list', 4),
  versus('listPets-limit20', 'prism-list', 7),
  {
    label: 'listPets limit=20 p99 ms at the run connections',
    value: (r) => r.get('listPets-limit20')?.p99Ms,
    goal: 10,
    atMost: true,
  },
  {
    label: 'server RSS MB with 1,000,000 pets under load (peak over its rows)',
    value: (r) => peak(['listPets-1m', 'cursor-page1', 'cursor-page1000'].map((name) => r.get(name)?.rssMB)),
    goal: 150,
    atMost: true,
  },
  {
    label: 'listPets latency 1,000,000 / 1,000 pets (p50)',
    value: (r) => latencyRatio(r.get('listPets-1m'), r.get('listPets-1k')),
    goal: 1.2,
    atMost: true,
  },
  {
    label: 'cursor walk latency page 1,000 / page 1 (p50)',
    value: (r) => latencyRatio(r.get('cursor-page1000'), r.get('cursor-page1')),
    goal: 1.2,
    atMost: true,
  },
]

function peak(values: (number | undefined)[]): number | undefined {
  const known = values.filter((value): value is number => value !== undefined)
  return known.length > 0 ? Math.max(...known) : undefined
}

/** Latency ratio with a 1 ms floor: autocannon reports whole milliseconds, so 0 vs 1 ms is not 'infinitely slower'. */
function latencyRatio(a?: Row, b?: Row): number | undefined {
  return a && b ? Math.max(a.p50Ms, 1) / Math.max(b.p50Ms, 1) : undefined
}

export function targetLines(rows: Row[], targets: Target[] = TARGETS): string[] {
  const byName = new Map(rows.map((row) => [row.name, row]))
  return targets.map((target) => {
    const value = target.value(byName)
    const met =
      value === undefined
        ? 'not measured'
        : (target.atMost ? value <= target.goal : value >= target.goal)
          ? 'met'
          : 'MISSED'
    const shown = value === undefined ? '-' : value.toFixed(2)
    return `| ${target.label} | ${target.atMost ? '≤' : '≥'} ${target.goal} | ${shown} | ${met} |`
  })
}

/** The rows as a markdown table, header included; `-` for × ceiling where the run measured no ceiling. */
export function rowTable(rows: Row[]): string[] {
  return [
    "| row | requests/s | p50 ms | p99 ms | server's CPU µs per request | server RSS MB | × ceiling | non-2xx / errors |",
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.requestsPerSec.toFixed(0)} | ${row.p50Ms} | ${row.p99Ms} | ${row.cpuMicroseconds?.service?.toFixed(0) ?? '-'} | ${row.rssMB.toFixed(0)} | ${row.ratioToCeiling ? row.ratioToCeiling.toFixed(3) : '-'} | ${row.failures}${row.note ? ` (${row.note})` : ''} |`,
    ),
  ]
}

export function markdown(
  rows: Row[],
  info: ReturnType<typeof machine>,
  command: string,
  settings: string,
): string {
  return [
    '# Benchmark results',
    '',
    `Command: \`${command}\` (${settings}). Machine: ${info.cores} cores (${info.cpu}), ${info.memoryGB} GiB, Node ${info.node}, ${info.platform}, ${info.date}.`,
    'Each server runs alone in its own process; autocannon runs in the harness process, over loopback.',
    '',
    ...rowTable(rows),
    '',
    '## Targets',
    '',
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...targetLines(rows),
    '',
  ].join('\n')
}
