import { type machine, type Row, type Target, targetLines, versus } from './report.js'

const cpuOf = (row: Row | undefined, part: string) => row?.cpuMicroseconds?.[part]

/** The scale-out issue's targets, from the rows of one `npm run bench:services` run. */
const TARGETS: Target[] = [
  versus('pg-list', 'sqlite-list', 0.5),
  versus('pg-list', 'pg-naive-list', 1.5),
  versus('pg-get', 'pg-naive-get', 1.2),
  versus('pg-mixed', 'pg-list', 0.8),
  {
    label: "the service's CPU per pg-list request (µs)",
    value: (rows) => cpuOf(rows.get('pg-list'), 'service'),
    goal: 50,
    atMost: true,
  },
  {
    label: 'pg-list p99 ms at the run connections',
    value: (rows) => rows.get('pg-list')?.p99Ms,
    goal: 10,
    atMost: true,
  },
]

const micro = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0))

export function servicesMarkdown(
  rows: Row[],
  info: ReturnType<typeof machine>,
  command: string,
  settings: string,
): string {
  const sqlite = rows.find((row) => row.name === 'sqlite-list')?.requestsPerSec ?? 0
  const table = rows.map((row) =>
    [
      row.name,
      row.requestsPerSec.toFixed(0),
      sqlite ? (row.requestsPerSec / sqlite).toFixed(2) : '-',
      row.p50Ms,
      row.p99Ms,
      micro(cpuOf(row, 'service')),
      micro(cpuOf(row, 'postgres')),
      micro(cpuOf(row, 'redis')),
      row.rssMB.toFixed(0),
      `${row.failures}${row.note ? ` (${row.note})` : ''}`,
    ].join(' | '),
  )
  return [
    '# Benchmark results: the scale-out path',
    '',
    `Command: \`${command}\` (${settings}). Machine: ${info.cores} cores (${info.cpu}), ${info.memoryGB} GiB, Node ${info.node}, ${info.platform}, ${info.date}.`,
    'One instance over PostgreSQL and Redis (started by scripts/with-services.sh), 100,000 pets; sqlite-list is',
    'the embedded instance on the same pets. CPU per request is user + system time from /proc over the row,',
    "divided by the requests answered: the service's process, PostgreSQL's postmaster and backends, Redis.",
    '',
    '| row | requests/s | × sqlite-list | p50 ms | p99 ms | service µs | PostgreSQL µs | Redis µs | RSS MB | non-2xx / errors |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...table.map((line) => `| ${line} |`),
    '',
    '## Targets',
    '',
    '| target | goal | measured | |',
    '|---|---|---|---|',
    ...targetLines(rows, TARGETS),
    '',
  ].join('\n')
}
