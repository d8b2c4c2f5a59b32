import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SUBSCRIPTIONS } from '../../src/webhooks/webhooks.schemas.js'
import { startWebhookApp, type WebhookApp } from './harness.js'

let t: WebhookApp
let key: string
let other: string

beforeAll(async () => {
  t = await startWebhookApp()
  key = await t.issueKey()
  other = await t.issueKey()
})
afterAll(() => t.close())

const url = 'http://hooks.test:9/in'

async function create(owner: string, body: object = { url, events: ['*'] }) {
  return t.api(owner, 'POST', '/webhook_endpoints', body)
}

describe('webhook endpoints', () => {
  it('shows the secret once, never again, and keeps each account to its own', async () => {
    const response = await create(key, { url, events: ['order.*', 'pet.updated'], description: 'shop' })
    expect(response.status).toBe(201)
    expect(response.headers.get('cache-control')).toBe('no-store')
    expect(response.headers.get('x-ratelimit-limit')).not.toBeNull()
    const endpoint = await response.json()
    expect(endpoint).toMatchObject({
      id: expect.stringMatching(/^we_\d+$/),
      url: 'http://hooks.test:9/in',
      events: ['order.*', 'pet.updated'],
      description: 'shop',
      status: 'enabled',
      disabledReason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    })
    expect(response.headers.get('location')).toMatch(new RegExp(`/v1/webhook_endpoints/${endpoint.id}$`))
    const read = await (await t.api(key, 'GET', `/webhook_endpoints/${endpoint.id}`)).json()
    expect(read).not.toHaveProperty('secret')
    const listed = await (await t.api(key, 'GET', '/webhook_endpoints')).text()
    expect(listed).not.toContain(endpoint.secret)
    expect((await t.api(other, 'GET', `/webhook_endpoints/${endpoint.id}`)).status).toBe(404)
    expect(await (await t.api(other, 'GET', '/webhook_endpoints')).json()).toEqual([])
    expect((await t.api(other, 'DELETE', `/webhook_endpoints/${endpoint.id}`)).status).toBe(404)
  })

  it('changes, disables, rotates and deletes', async () => {
    const endpoint = await (await create(key)).json()
    const path = `/webhook_endpoints/${endpoint.id}`
    const patched = await t.api(key, 'PATCH', path, {
      events: ['pet.created'],
      description: null,
      status: 'disabled',
    })
    expect(await patched.json()).toMatchObject({
      events: ['pet.created'],
      description: null,
      status: 'disabled',
    })
    const rotated = await t.api(key, 'POST', `${path}/rotate_secret`)
    expect(rotated.status).toBe(200)
    const { secret } = await rotated.json()
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(endpoint.secret)
    expect((await t.api(key, 'POST', `${path}/rotate_secret`, { graceSeconds: 604_801 })).status).toBe(400)
    expect((await t.api(key, 'DELETE', path)).status).toBe(204)
    expect((await t.api(key, 'GET', path)).status).toBe(404)
    expect((await t.api(key, 'PATCH', path, { status: 'enabled' })).status).toBe(404)
  })

  it('refuses bad bodies with a 400 naming the field, and read keys with a 403', async () => {
    const cases = [
      [{ url, events: [] }, /events/],
      [{ url, events: ['pet.sold'] }, /events/],
      [{ url }, /events/],
      [{ url: 'ftp://hooks.test/', events: ['*'] }, /url: .*https/],
      [{ url: 'https://user:pw@hooks.test/', events: ['*'] }, /url: .*password/],
      [{ url: 'https://nowhere.invalid/', events: ['*'] }, /url: .*resolve/],
      [{ url, events: ['*'], color: 'red' }, /color/],
    ] as const
    for (const [body, message] of cases) {
      const response = await create(key, body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect((await response.json()).message).toMatch(message)
    }
    const reader = await t.issueKey('read')
    expect((await create(reader)).status).toBe(403)
    expect((await t.api(key, 'PATCH', '/webhook_endpoints/we_1', {})).status).toBe(400)
    expect((await t.api(key, 'GET', '/webhook_endpoints/12')).status).toBe(400)
  })

  it('names the rule a field breaks and its limit, on creation and on change', async () => {
    const cases = [
      [{ url, events: [] }, 'events must have at least 1 item'],
      [{ url, events: ['*', '*'] }, 'events must not repeat an item'],
      [{ url, events: [...SUBSCRIPTIONS, '*'] }, `events must have at most ${SUBSCRIPTIONS.length} items`],
      [{ url, events: '*' }, 'events must be an array'],
      [{ url: '', events: ['*'] }, 'url must not be empty'],
      [{ url: `${url}?${'q'.repeat(2048)}`, events: ['*'] }, 'url must be at most 2048 characters long'],
      [
        { url, events: ['*'], description: 'd'.repeat(501) },
        'description must be at most 500 characters long',
      ],
    ] as const
    const endpoint = await (await create(key)).json()
    for (const [body, message] of cases) {
      const created = await create(key, body)
      expect(created.status, JSON.stringify(body).slice(0, 80)).toBe(400)
      expect((await created.json()).message).toBe(message)
      const patched = await t.api(key, 'PATCH', `/webhook_endpoints/${endpoint.id}`, body)
      expect(patched.status).toBe(400)
      expect((await patched.json()).message).toBe(message)
    }
  })

  it('refuses a URL whose stored, percent-encoded form is over 2048 characters, on creation and on change', async () => {
    const owner = await t.issueKey()
    const long = `${url}/${'€'.repeat(700)}` // 721 characters as sent; each € is stored as %E2%82%AC
    const stored = new URL(long).href.length
    const message = `url: webhook URLs must be at most 2048 characters long once percent-encoded, and this one has ${stored}`
    const created = await create(owner, { url: long, events: ['*'] })
    expect(created.status).toBe(400)
    expect((await created.json()).message).toBe(message)
    expect(await (await t.api(owner, 'GET', '/webhook_endpoints')).json()).toEqual([])
    const endpoint = await (await create(owner)).json()
    const patched = await t.api(owner, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { url: long })
    expect(patched.status).toBe(400)
    expect((await patched.json()).message).toBe(message)
    const fits = `${url}/${'€'.repeat(200)}`
    const accepted = await t.api(owner, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { url: fits })
    expect((await accepted.json()).url).toBe(new URL(fits).href)
  })

  it('refuses text that is not valid Unicode (a lone surrogate) rather than store it changed', async () => {
    const endpoint = await (await create(key)).json()
    const cases = [
      [
        { url, events: ['*'], description: 'x\ud800y' },
        'description must be valid Unicode (no lone surrogates)',
      ],
      [{ url: `${url}?x=\udc00`, events: ['*'] }, 'url must be valid Unicode (no lone surrogates)'],
    ] as const
    for (const [body, message] of cases) {
      const created = await create(key, body)
      expect(created.status).toBe(400)
      expect((await created.json()).message).toBe(message)
      const patched = await t.api(key, 'PATCH', `/webhook_endpoints/${endpoint.id}`, body)
      expect(patched.status).toBe(400)
      expect((await patched.json()).message).toBe(message)
    }
    const read = await (await t.api(key, 'GET', `/webhook_endpoints/${endpoint.id}`)).json()
    expect(read).toMatchObject({ url, description: null })
  })

  it('allows 10 live endpoints per account', async () => {
    const owner = await t.issueKey()
    const made = []
    for (let index = 0; index < 10; index++) made.push(await (await create(owner)).json())
    const eleventh = await create(owner)
    expect(eleventh.status).toBe(409)
    expect((await eleventh.json()).code).toBe('conflict')
    expect((await t.api(owner, 'DELETE', `/webhook_endpoints/${made[0].id}`)).status).toBe(204)
    expect((await create(owner)).status).toBe(201)
  })

  it('pages the list with Link rel="next"', async () => {
    const owner = await t.issueKey()
    for (let index = 0; index < 3; index++) await create(owner)
    const first = await t.api(owner, 'GET', '/webhook_endpoints?limit=2')
    expect(await first.json()).toHaveLength(2)
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.get('link') ?? '')?.[1] ?? ''
    const second = await fetch(next, { headers: { authorization: `Bearer ${owner}` } })
    expect(await second.json()).toHaveLength(1)
    expect(second.headers.get('link')).toBeNull()
  })
})
