import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach } from 'vitest'
import {
  issueUnlimitedKey,
  killService,
  type Service,
  spawnService,
  waitUntilHealthy,
} from '../service-process.js'
import { type OtlpReceiver, startOtlpReceiver } from './otlp-receiver.js'

/**
 * A test file's traced services: registers the hooks that give each test a temporary folder (`dir()`) and
 * stop, after it, every service and OTLP receiver it started through `serve` and `receiver`.
 */
export function tracedServices(prefix: string) {
  let dir = ''
  const services: Service[] = []
  const receivers: OtlpReceiver[] = []
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix))
  })
  afterEach(async () => {
    await Promise.all(services.splice(0).map(killService))
    await Promise.all(receivers.splice(0).map((receiver) => receiver.close()))
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    dir: () => dir,
    receiver: async (...options: Parameters<typeof startOtlpReceiver>) => {
      const receiver = await startOtlpReceiver(...options)
      receivers.push(receiver)
      return receiver
    },
    /**
     * The service as a process on a SQLite file in `dir()`, with the environment given (tracing's
     * variables), an unlimited key, and a listPets call with it.
     */
    serve: async (env: Record<string, string>) => {
      const full = {
        DATABASE_URL: `sqlite:${join(dir, 'petstore.sqlite')}`,
        OTEL_BSP_SCHEDULE_DELAY: '50',
        ...env,
      }
      const { key } = await issueUnlimitedKey(full, dir)
      const service = await spawnService(full)
      services.push(service)
      await waitUntilHealthy(service)
      const listPets = (headers: Record<string, string> = {}) =>
        fetch(`http://127.0.0.1:${service.port}/v1/pets`, {
          headers: { authorization: `Bearer ${key}`, ...headers },
        })
      return { service, listPets, key }
    },
  }
}
