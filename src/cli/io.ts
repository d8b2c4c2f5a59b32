import type { Deps } from '../deps.js'
import { parseInteger } from '../integer.js'

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

/**
 * A database command (`keys …`, `webhooks …`): it reads its arguments first, so that a usage error comes
 * before the database is opened (or created, or migrated), and gives back what runs once it is.
 */
export type DatabaseCommand = (args: string[], now: number) => (deps: Deps, io: CliIo) => Promise<void>

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

/** The one positional id of `keys <command> ID`. */
export function oneId(positionals: string[], command: string): number {
  const id = positionals.length === 1 ? parseInteger(positionals[0] ?? '') : Number.NaN
  if (!Number.isSafeInteger(id) || id < 1)
    throw new UsageError(`give the id of one key: petstore keys ${command} ID`)
  return id
}
