import { parseArgs } from 'node:util'
import type { Deps } from '../deps.js'
import { parseInteger } from '../integer.js'
import { type CliIo, type DatabaseCommand, formatTable, UsageError } from './io.js'

export const WEBHOOKS_HELP = `Usage: petstore webhooks <command>

  webhooks list [--json]
      Every account's webhook endpoints: id, key id, status (and why it is disabled), URL, events.
      Never a secret.
  webhooks disable ID
      Disables an endpoint of any account (ID like we_12): nothing more is sent to it and its pending
      retries end; its owner sees "disabled by the operators" and may enable it again.

Both commands open the database of DATABASE_URL, which must exist.`

/** What an operator's disable says to the endpoint's owner. */
const OPERATOR_REASON = 'disabled by the operators'

export const webhooksCommands: Record<string, DatabaseCommand> = {
  list: listEndpoints,
  disable: disableEndpoint,
}

function listEndpoints(args: string[]) {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } })
  return async (deps: Deps, io: CliIo) => {
    const endpoints = await deps.webhookEndpoints.listAll()
    io.out(values.json ? JSON.stringify(endpoints) : endpointsTable(endpoints))
  }
}

function endpointsTable(endpoints: Awaited<ReturnType<Deps['webhookEndpoints']['listAll']>>): string {
  if (endpoints.length === 0) return 'No webhook endpoints.'
  const rows = endpoints.map((endpoint) => [
    endpoint.id,
    String(endpoint.apiKeyId),
    endpoint.disabledReason ? `${endpoint.status} (${endpoint.disabledReason})` : endpoint.status,
    endpoint.url,
    endpoint.events.join(','),
  ])
  return formatTable(['ID', 'KEY', 'STATUS', 'URL', 'EVENTS'], rows)
}

function disableEndpoint(args: string[]) {
  const { positionals } = parseArgs({ args, allowPositionals: true, options: {} })
  const id = positionals.length === 1 ? parseInteger((positionals[0] ?? '').replace(/^we_/, '')) : Number.NaN
  if (!(id >= 1)) throw new UsageError('give the id of one endpoint: petstore webhooks disable we_12')
  return async (deps: Deps, io: CliIo) => {
    if (!(await deps.webhookEndpoints.disable(id, OPERATOR_REASON))) {
      throw new UsageError(`no webhook endpoint we_${id}: petstore webhooks list shows them`)
    }
    io.out(`Disabled we_${id}: nothing more is sent to it.`)
  }
}
