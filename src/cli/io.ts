/** Where a command writes, and the environment it reads: injected so tests run commands in-process. */
export interface CliIo {
  out(text: string): void
  err(text: string): void
  env: Readonly<Record<string, string | undefined>>
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
}

/** A mistake in how a command was called: printed as one line, exit code 2. */
export class UsageError extends Error {}

/** Left-aligned columns, for humans; scripts use --json. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}
