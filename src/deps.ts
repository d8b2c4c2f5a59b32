import type { DestinationStream, Logger } from 'pino'
import { limitsFor } from './api-keys/api-keys.plans.js'
import { type ApiKeyService, createApiKeyService } from './api-keys/api-keys.service.js'
import { createUsageRecorder, type UsageRecorder } from './api-keys/usage.js'
import { type Clock, systemClock } from './clock.js'
import type { Config } from './config.js'
import { connectDatabase } from './db/connect.js'
import { withDeadline } from './db/deadline.js'
import type { DbHandle } from './db/handle.js'
import { migrateDatabase } from './db/migrate.js'
import { trackWriteHealth } from './db/write-health.js'
import { createEventRecorder, type EventRecorder } from './events/events.publisher.js'
import type { GuardDeps } from './http/guard.js'
import { createMetrics, type Metrics } from './http/metrics.js'
import { createLogger } from './logger.js'
import { createInventoryCounter, type InventoryCounter } from './orders/inventory.service.js'
import { createOrderRepository } from './orders/orders.repository.js'
import { createOrderService, type OrderService } from './orders/orders.service.js'
import { createPetService, type PetService } from './pets/pets.service.js'
import { withFallback } from './rate-limit/fallback-store.js'
import { createMemoryStore } from './rate-limit/memory-store.js'
import type { Limits, RateLimitStore } from './rate-limit/rate-limit.port.js'
import { isKeySubject } from './rate-limit/subjects.js'
import { databaseStartupError } from './startup-errors.js'
import { type AddressRules, addressRulesOf, type Resolve } from './webhooks/address.js'
import { createEndpointService, type EndpointService } from './webhooks/endpoints.service.js'
import { createEventLog, type EventLog } from './webhooks/event-log.js'
import { createDnsResolve } from './webhooks/resolve.js'
import { createWebhookRetention } from './webhooks/retention.js'
import { createTestEvents, type TestEvents } from './webhooks/test-events.js'

/** The object graph the server, the CLI and the tests share. */
export interface Deps {
  config: Config
  clock: Clock
  logger: Logger
  /** The one database handle: Kysely, the prepared reads and the change token (see db/handle.ts). */
  database: DbHandle
  pets: PetService
  orders: OrderService
  /** Animals by status, from counts the database maintains; folds them every second. */
  inventory: InventoryCounter
  apiKeys: ApiKeyService
  /** Webhook endpoints of each account (CONTRACT §14). */
  webhookEndpoints: EndpointService
  /** Events as an account reads them, their redelivery, and the attempts log. */
  eventLog: EventLog
  /** `ping` events sent to one endpoint on its owner's request, at most 10 a minute each. */
  testEvents: TestEvents
  /** Which webhook URLs may be reached, and how names are resolved (the dispatcher judges them again). */
  addressRules: AddressRules
  /** The guard's port to api-keys (http/ never imports it): a bearer token's principal, or a 401. */
  authenticate: GuardDeps['authenticate']
  /** Limits of requests counted per client IP: the Free plan's. */
  anonymousLimits: Limits
  /** Requests per account, day and status class: counted in memory, flushed every few seconds. */
  usage: UsageRecorder
  metrics: Metrics
  rateLimitStore: RateLimitStore
  /** Resolves when every store the service needs answers. */
  checkReady(): Promise<void>
  close(): Promise<void>
}

export interface DepsOptions {
  clock?: Clock
  logDestination?: DestinationStream
  /** Replaces the store the configuration picks (benchmarks compare against a no-op store). */
  rateLimitStore?: RateLimitStore
  /** Resolves webhook host names (tests answer for names of their own); DNS (webhooks/resolve.ts) by default. */
  resolve?: Resolve
  /**
   * Replaces the recorder that writes each change's events (a benchmark compares writes against one that
   * writes none: what the event insert costs).
   */
  eventRecorder?: EventRecorder
}

export const PURGE_INTERVAL_MS = 10 * 60 * 1000
/** /readyz answers within this, whatever the database does (CONTRACT §13). */
export const READY_TIMEOUT_MS = 1000

/** The composition root: opens and migrates the database and wires the services to it. */
export async function createDeps(config: Config, options: DepsOptions = {}): Promise<Deps> {
  const clock = options.clock ?? systemClock
  const logger = createLogger(config.logLevel, options.logDestination)
  const metrics = createMetrics()
  // Redis first: a store that cannot be reached at start-up stops it (CONTRACT §1) before anything opens.
  const rateLimitStore = options.rateLimitStore ?? (await createRateLimitStore(config, logger, metrics))
  const applied = await migrateDatabase(config.database).catch(async (error: unknown) => {
    await rateLimitStore.close()
    throw databaseStartupError(config.database, error)
  })
  if (applied.length > 0) logger.info({ migrations: applied }, 'database migrated')
  const writeHealth = trackWriteHealth(await connectDatabase(config.database))
  const database = writeHealth.handle
  const events = options.eventRecorder ?? createEventRecorder(database, () => clock.now())
  // Orders build on pets: the pet service asks them through this function, never imports them.
  const pets = createPetService({
    handle: database,
    clock,
    events,
    orderHold: createOrderRepository(database).orderHoldOn,
  })
  const usage = createUsageRecorder({ handle: database, clock, logger })
  const inventory = createInventoryCounter({ handle: database, logger })
  const apiKeys = createApiKeyService({ handle: database, clock, env: config.env })
  const addressRules = addressRulesOf(config, options.resolve ?? createDnsResolve())
  const purgeWebhookData = createWebhookRetention(database)
  const purge = setInterval(() => {
    pets
      .purgeExpiredIdempotencyKeys()
      .catch((error) => logger.warn({ err: error }, 'idempotency purge failed'))
    purgeWebhookData(clock.now()).catch((error) =>
      logger.warn({ err: error }, 'events and webhook attempts purge failed'),
    )
  }, PURGE_INTERVAL_MS)
  purge.unref()

  return {
    config,
    clock,
    logger,
    database,
    pets,
    orders: createOrderService({ handle: database, clock, events }),
    inventory,
    apiKeys,
    webhookEndpoints: createEndpointService({ handle: database, clock, rules: addressRules }),
    eventLog: createEventLog({ handle: database, clock }),
    testEvents: createTestEvents({ handle: database, clock, limiter: rateLimitStore }),
    addressRules,
    authenticate: apiKeys.verifyApiKey,
    anonymousLimits: limitsFor('free'),
    usage,
    metrics,
    rateLimitStore,
    checkReady: () => {
      const check = async () => {
        await database.ping()
        await writeHealth.check()
      }
      return withDeadline(check(), READY_TIMEOUT_MS, 'the readiness check')
    },
    close: async () => {
      clearInterval(purge)
      // What was counted since the last flush is written now; if the database refuses, it is logged.
      await usage.close().catch((error) => logger.warn({ err: error }, 'usage flush at shutdown failed'))
      await inventory.close()
      await rateLimitStore.close()
      await database.close()
    },
  }
}

/**
 * Redis when REDIS_URL is set (shared by every instance), falling back to per-instance limits while it
 * is unreachable; else the in-process store.
 */
async function createRateLimitStore(
  config: Config,
  logger: Logger,
  metrics: Metrics,
): Promise<RateLimitStore> {
  const policy = { banAfter: config.banAfter, banMs: config.banSeconds * 1000 }
  const memory = createMemoryStore({ ...policy, keep: isKeySubject })
  if (!config.redisUrl) return memory
  // Loaded with Redis only: an instance without it, and the CLI, never load ioredis.
  const { createRedisStore } = await import('./rate-limit/redis-store.js')
  return withFallback(await createRedisStore(config.redisUrl, policy, config.redisTimeoutMs), memory, {
    onFallback: (error, first) => {
      metrics.rateLimitFallbacks.inc()
      if (first)
        logger.warn({ err: error }, 'rate-limit store unreachable: limiting per instance until it answers')
    },
    onRecovery: () => logger.info('rate-limit store answers again: limits are shared again'),
  })
}
