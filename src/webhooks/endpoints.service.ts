import { setTimeout as delay } from 'node:timers/promises'
import type { Clock } from '../clock.js'
import { lockTransaction } from '../db/advisory-lock.js'
import type { Db } from '../db/database.js'
import type { DbHandle } from '../db/handle.js'
import { AppError } from '../errors.js'
import { createEventCatchUp, publishCommitted } from '../events/events.publisher.js'
import { parseInteger } from '../integer.js'
import { afterIdOf, keysetPage, type Page } from '../pagination/keyset.js'
import { refuseLoneSurrogates } from '../unicode.js'
import { type AddressRules, checkWebhookUrl, WebhookUrlError } from './address.js'
import { createAttemptsRepository, ENDING_BATCH } from './attempts.repository.js'
import { createDisabler } from './disable.js'
import { endedKeyReason } from './ended-endpoints.js'
import { createEndpointsRepository, type EndpointRow } from './endpoints.repository.js'
import { waitForFanOuts } from './fan-out.js'
import { OWNERSHIP_WINDOW_MS } from './ownership-windows.js'
import { MAX_RETIRED_SECRETS, newSecret, retiredSecrets } from './signature.js'
import { SWEEP_GRACE_MS } from './sweep.js'
import type { NewWebhookEndpoint, WebhookEndpoint, WebhookEndpointPatch } from './webhooks.schemas.js'

/** Endpoints per account, deleted ones not counted (CONTRACT §14). */
export const MAX_ENDPOINTS_PER_ACCOUNT = 10
/** Creations of one account serialise on this lock plus the account's id (PostgreSQL), for the cap. */
const CREATE_LOCK_BASE = 2 ** 40
/** What an answer waits beyond OWNERSHIP_WINDOW_MS on PostgreSQL (`outwaitReadWindows`). */
const READ_WINDOW_MARGIN_MS = 5

export const endpointIdOf = (id: number): string => `we_${id}`
/** The number in a `we_…` id (the route's schema checked its shape). */
export const endpointNumberOf = (id: string): number => parseInteger(id.slice('we_'.length))

/** The one place a stored row becomes a WebhookEndpoint: never its secret. */
export function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: endpointIdOf(row.id),
    url: row.url,
    events: JSON.parse(row.events) as WebhookEndpoint['events'],
    description: row.description,
    status: row.status as WebhookEndpoint['status'],
    disabledReason: row.disabled_reason,
    createdAt: new Date(row.created_at).toISOString(),
  }
}

export type EndpointService = ReturnType<typeof createEndpointService>

/** Webhook endpoints of an account (CONTRACT §14): each account sees and changes its own only. */
export function createEndpointService(deps: { handle: DbHandle; clock: Clock; rules: AddressRules }) {
  const { handle, clock } = deps
  const repository = createEndpointsRepository(handle)
  const attempts = createAttemptsRepository(handle)
  const disableIn = createDisabler(handle, { answered: true })
  /**
   * Before a creation's or a PATCH's transaction (PostgreSQL): the events committed so far numbered in
   * bounded transactions of their own, so that the one `publishCommitted` runs under the publishers' lock
   * in the caller's transaction numbers only those committed in between, a few.
   */
  const catchUp = createEventCatchUp(handle)
  /**
   * Waited for before answering, after a commit that changed what a dispatcher's pre-send read finds for
   * an endpoint's attempts: it ended them (a DELETE, a disable), or changed where or how they are sent (a
   * PATCH of the URL, a rotation). On PostgreSQL such a read lets them start, with the URL and secrets it
   * found, for OWNERSHIP_WINDOW_MS after it was sent (ownership-windows.ts), so after this wait none read
   * before the commit starts. A few ms more: a timer may fire up to a millisecond early. SQLite's
   * dispatchers read each attempt in place just before it starts: nothing to wait for.
   */
  const outwaitReadWindows = (): Promise<void> =>
    handle.dialect === 'postgres' ? delay(OWNERSHIP_WINDOW_MS + READ_WINDOW_MARGIN_MS) : Promise.resolve()

  /** The URL as the address rules judge it now: a 400 naming the reason when they refuse it. */
  async function judge(url: string): Promise<string> {
    // WHATWG parsing would turn a lone surrogate into an encoded U+FFFD: a URL the partner never wrote.
    refuseLoneSurrogates('url', url)
    try {
      return (await checkWebhookUrl(url, deps.rules)).url.href
    } catch (error) {
      if (error instanceof WebhookUrlError) throw new AppError('invalid_request', `url: ${error.message}`)
      throw error
    }
  }

  /** The account's endpoint a write changes, its row locked to the end of `trx` (PostgreSQL); else a 404. */
  async function owned(trx: Db, apiKeyId: number, id: string): Promise<EndpointRow> {
    const row = await repository.lockOwnIn(trx, apiKeyId, endpointNumberOf(id))
    if (!row) throw notFound(id)
    return row
  }

  async function create(apiKeyId: number, body: NewWebhookEndpoint) {
    if (body.description) refuseLoneSurrogates('description', body.description)
    const url = await judge(body.url)
    const secret = newSecret()
    await catchUp()
    const row = await handle.write(async (trx) => {
      await lockTransaction(handle, trx, CREATE_LOCK_BASE + apiKeyId)
      if ((await repository.countIn(trx, apiKeyId)) >= MAX_ENDPOINTS_PER_ACCOUNT) {
        throw new AppError(
          'conflict',
          `an account has at most ${MAX_ENDPOINTS_PER_ACCOUNT} webhook endpoints: delete one first`,
        )
      }
      const fields = { url, events: body.events, description: body.description ?? null }
      // It takes the events that commit after this one does, exactly (see enabled_after_seq).
      await publishCommitted(handle, trx)
      return repository.insert(trx, apiKeyId, fields, secret, clock.now())
    })
    return { ...toEndpoint(row), secret }
  }

  async function list(apiKeyId: number, limit: number, cursor?: string): Promise<Page<WebhookEndpoint>> {
    const rows = await repository.page(apiKeyId, afterIdOf(cursor), limit + 1)
    const page = keysetPage(rows, limit)
    return { ...page, items: page.items.map(toEndpoint) }
  }

  async function get(apiKeyId: number, id: string): Promise<WebhookEndpoint> {
    const row = await repository.find(apiKeyId, endpointNumberOf(id))
    if (!row) throw notFound(id)
    return toEndpoint(row)
  }

  async function patch(
    apiKeyId: number,
    id: string,
    changes: WebhookEndpointPatch,
  ): Promise<WebhookEndpoint> {
    if (changes.description) refuseLoneSurrogates('description', changes.description)
    const url = changes.url === undefined ? undefined : await judge(changes.url)
    const now = clock.now()
    if (changes.status === 'enabled') await endBeforeReenabling(apiKeyId, id, now)
    await catchUp()
    const patched = await handle.write(async (trx) => {
      // Exactly between two events: those committed so far keep the subscription they committed under.
      // First, then the row, locked (PostgreSQL): PATCHes of one endpoint take turns on the publishers'
      // lock, and each keeps the subscription the one before it left, never one read before it committed.
      await publishCommitted(handle, trx)
      const row = await owned(trx, apiKeyId, id)
      const events = changes.events === undefined ? undefined : JSON.stringify(changes.events)
      if (events !== undefined && events !== row.events)
        await repository.keepSubscription(trx, row.id, row.events)
      if (changes.status === 'disabled') await disableIn(trx, row.id, null, now)
      // Re-enabled: from the last committed event on (nothing missed meanwhile), the five-day rule afresh.
      // Nothing written before stays pending: what is left after `endBeforeReenabling` (a few a fan-out
      // wrote after the disable, or a disable since) ends here.
      if (changes.status === 'enabled' && row.status !== 'enabled') {
        await endAllPending(trx, row, now)
        await repository.reenable(trx, row.id)
      }
      const updated = await repository.update(trx, row.id, {
        ...(url !== undefined && { url }),
        ...(events !== undefined && { events }),
        ...(changes.description !== undefined && { description: changes.description }),
      })
      return toEndpoint(updated ?? row)
    })
    // Even when it was disabled already: the dispatcher's own disable (a 410, five days of failures) does
    // not wait, so attempts its reads confirmed may start for another window, and this 200 promises none.
    // A new URL: none of those attempts starts to the one it replaced after the 200.
    if (changes.status === 'disabled' || url !== undefined) await outwaitReadWindows()
    return patched
  }

  /** Up to ENDING_BATCH pending attempts of a disabled endpoint ended, with its reason; how many. */
  const endSome = (trx: Db, row: EndpointRow, now: number) =>
    attempts.failPending(trx, row.id, row.disabled_reason ?? 'the endpoint was disabled', now)

  /** Every pending attempt of a disabled endpoint ended, ENDING_BATCH a statement, in `trx`. */
  async function endAllPending(trx: Db, row: EndpointRow, now: number): Promise<void> {
    while ((await endSome(trx, row, now)) === ENDING_BATCH) {}
  }

  /**
   * Before a re-enable, the disabled endpoint's pending attempts the dispatchers have not ended yet (its
   * disable ended ENDING_BATCH of them), a transaction of ENDING_BATCH each, its row locked in each as a
   * step or a sweep locks it: a backlog of days does not make the re-enable's own transaction long.
   */
  async function endBeforeReenabling(apiKeyId: number, id: string, now: number): Promise<void> {
    const more = async (trx: Db) => {
      const row = await owned(trx, apiKeyId, id)
      return row.status === 'disabled' && (await endSome(trx, row, now)) === ENDING_BATCH
    }
    while (await handle.write(more)) {}
  }

  async function remove(apiKeyId: number, id: string): Promise<void> {
    const now = clock.now()
    await handle.write(async (trx) => {
      const row = await owned(trx, apiKeyId, id)
      await repository.update(trx, row.id, { deleted_at: now, sweep_until: now + SWEEP_GRACE_MS })
      await waitForFanOuts(handle, trx)
      await attempts.failPending(trx, row.id, 'the endpoint was deleted', now)
    })
    await outwaitReadWindows()
  }

  /**
   * A new secret, shown once. The one it replaces keeps signing too for `graceSeconds`, and so do older
   * ones still in their own grace (the 3 newest); a grace of 0 ends every old secret at once: no attempt
   * that starts after the answer is signed with it, queued ones included.
   */
  async function rotate(apiKeyId: number, id: string, graceSeconds: number) {
    const secret = newSecret()
    const now = clock.now()
    const row = await handle.write(async (trx) => {
      const row = await owned(trx, apiKeyId, id)
      const retired =
        graceSeconds === 0
          ? []
          : [
              ...retiredSecrets(row.retired_secrets, now),
              { secret: row.secret, until: now + graceSeconds * 1000 },
            ]
      const changes = { secret, retired_secrets: JSON.stringify(retired.slice(-MAX_RETIRED_SECRETS)) }
      return (await repository.update(trx, row.id, changes)) ?? row
    })
    await outwaitReadWindows()
    return { ...toEndpoint(row), secret }
  }

  return {
    create,
    list,
    get,
    patch,
    remove,
    rotate,
    /**
     * Every account's endpoints, for operators (never a secret). One whose account's key was revoked or
     * has expired is shown disabled with that reason: fan-out passes it by (the key's state, judged at
     * each event, so a key renewed with `keys update --expires` brings it back with nothing to undo).
     */
    listAll: async () => {
      const now = clock.now()
      return (await repository.all()).map((row) => {
        const endpoint = { ...toEndpoint(row), apiKeyId: row.api_key_id }
        const key = { revokedAt: row.key_revoked_at, expiresAt: row.key_expires_at }
        const why = endedKeyReason(key, now)
        if (endpoint.status !== 'enabled' || why === undefined) return endpoint
        return { ...endpoint, status: 'disabled' as const, disabledReason: why }
      })
    },
    /** Disables any account's endpoint (operators); false when there is no such endpoint. */
    async disable(id: number, reason: string | null): Promise<boolean> {
      const disabled = await handle.write((trx) => disableIn(trx, id, reason, clock.now()))
      if (disabled) await outwaitReadWindows()
      return disabled
    },
  }
}

const notFound = (id: string) => new AppError('not_found', `webhook endpoint ${id} does not exist`)
