import { join } from 'node:path'
import { issueUnlimitedKey, type Service, spawnService, waitUntilHealthy } from '../service-process.js'

/**
 * The service as a process on a SQLite file in `dir`, with the environment given (tracing's variables), an
 * unlimited key, and a listPets call with it; pushed on `services` for the caller's cleanup.
 */
export async function serveTraced(dir: string, env: Record<string, string>, services: Service[]) {
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
  return { service, listPets }
}
