import { parseArgs } from 'node:util'
import { STATUS_CLASSES, usageOf } from '../api-keys/usage.js'
import type { Deps } from '../deps.js'
import { parseInteger } from '../integer.js'
import { type CliIo, formatTable, oneId, UsageError } from './io.js'

/** The days `keys usage` prints unless `--days` says otherwise. */
export const DEFAULT_KEYS_USAGE_DAYS = 7

/** `keys usage ID [--days N] [--json]`: the account's requests per UTC day, by status class. */
export function showUsage(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      days: { type: 'string', default: String(DEFAULT_KEYS_USAGE_DAYS) },
      json: { type: 'boolean', default: false },
    },
  })
  const id = oneId(positionals, 'usage')
  const days = parseInteger(values.days)
  if (!(days >= 1 && days <= 366)) throw new UsageError('--days must be a whole number from 1 to 366')
  return async (deps: Deps, io: CliIo) => {
    const key = await deps.apiKeys.findApiKey(id)
    const usage = await usageOf(deps.database, key.id, days, deps.clock.now())
    if (values.json) {
      io.out(JSON.stringify({ id: key.id, days: usage.map(({ day, requests }) => ({ day, ...requests })) }))
      return
    }
    const rows = usage.map(({ day, requests }) => [
      day,
      ...STATUS_CLASSES.map((name) => String(requests[name])),
    ])
    io.out(formatTable(['DAY (UTC)', ...STATUS_CLASSES], rows))
  }
}
