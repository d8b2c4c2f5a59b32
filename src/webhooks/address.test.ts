import { createSocket } from 'node:dgram'
import { describe, expect, it } from 'vitest'
import {
  type AddressRules,
  checkWebhookUrl,
  pinnedLookup,
  type Resolve,
  type ResolvedAddress,
  WebhookUrlError,
} from './address.js'
import { createDnsResolve } from './resolve.js'

/** A resolver that records every name it is asked and answers from a table (unknown names: nothing). */
function fakeResolver(table: Record<string, ResolvedAddress[] | Error> = {}) {
  const asked: string[] = []
  const resolve: Resolve = async (hostname) => {
    asked.push(hostname)
    const answer = table[hostname] ?? []
    if (answer instanceof Error) throw answer
    return answer
  }
  return { asked, resolve }
}

function rules(overrides: Partial<AddressRules> = {}): AddressRules {
  return { allowPrivate: false, allowHttp: false, resolve: fakeResolver().resolve, ...overrides }
}

async function refusal(raw: string, given: AddressRules): Promise<string> {
  const error = await checkWebhookUrl(raw, given).then(
    () => undefined,
    (err: unknown) => err,
  )
  expect(error).toBeInstanceOf(WebhookUrlError)
  return (error as Error).message
}

describe('WHATWG URL parsing', () => {
  it.each([
    'http://0x7f.1/',
    'http://2130706433/',
    'http://017700000001/',
    'http://0177.0.0.1/',
    'http://127.1/',
  ])('normalises %s to 127.0.0.1', (raw) => {
    expect(new URL(raw).hostname).toBe('127.0.0.1')
  })

  it('writes IPv4-mapped and IPv4-compatible IPv6 in hex', () => {
    expect(new URL('https://[::ffff:127.0.0.1]/').hostname).toBe('[::ffff:7f00:1]')
    expect(new URL('https://[::127.0.0.1]/').hostname).toBe('[::7f00:1]')
  })
})

describe('checkWebhookUrl refuses non-public literal addresses without any lookup', () => {
  it.each([
    ['http://127.0.0.1', '127.0.0.1, a loopback'],
    ['https://127.0.0.1', '127.0.0.1, a loopback'],
    ['https://2130706433/', '127.0.0.1, a loopback'],
    ['https://0x7f000001/', '127.0.0.1, a loopback'],
    ['https://017700000001/', '127.0.0.1, a loopback'],
    ['https://0177.0.0.1/', '127.0.0.1, a loopback'],
    ['https://127.1/', '127.0.0.1, a loopback'],
    ['https://0/', '0.0.0.0, an unspecified'],
    ['https://0.0.0.0/', '0.0.0.0, an unspecified'],
    ['https://0.1.2.3/', '0.1.2.3, an unspecified'],
    ['https://10.0.0.1', '10.0.0.1, a private'],
    ['https://172.16.0.1', '172.16.0.1, a private'],
    ['https://192.168.1.1', '192.168.1.1, a private'],
    ['https://169.254.169.254/latest/meta-data', '169.254.169.254, a link-local'],
    ['https://100.64.0.1', '100.64.0.1, a carrier-grade NAT'],
    ['https://224.0.0.1', '224.0.0.1, a multicast'],
    ['https://255.255.255.255', '255.255.255.255, a broadcast'],
    ['https://192.0.2.1', '192.0.2.1, a reserved'],
    ['https://[::1]/', '::1, a loopback'],
    ['https://[::]/', '::, an unspecified'],
    ['https://[fc00::1]', 'fc00::1, a unique-local'],
    ['https://[fd12::1]', 'fd12::1, a unique-local'],
    ['https://[fe80::1]', 'fe80::1, a link-local'],
    ['https://[ff02::1]', 'ff02::1, a multicast'],
    ['https://[::ffff:127.0.0.1]', '::ffff:7f00:1, a loopback'],
    ['https://[::ffff:169.254.169.254]', '::ffff:a9fe:a9fe, a link-local'],
    ['https://[::127.0.0.1]', '::7f00:1, a loopback'],
    ['https://[::10.0.0.1]', '::a00:1, a private'],
    ['https://[::ffff:0:7f00:1]', '::ffff:0:7f00:1, an IPv4-translated'],
    ['https://[64:ff9b::7f00:1]', '64:ff9b::7f00:1, a NAT64'],
    ['https://[2002:7f00:1::]', '2002:7f00:1::, a 6to4'],
    ['https://[2001::1]', '2001::1, a Teredo'],
  ])('%s', async (raw, named) => {
    const { asked, resolve } = fakeResolver()
    const message = await refusal(raw, rules({ allowHttp: true, resolve }))
    expect(message).toBe(`the host resolves to ${named} address: webhook URLs must reach public addresses`)
    expect(asked).toEqual([])
  })
})

describe('checkWebhookUrl refuses the form of the URL before any lookup', () => {
  it.each([
    ['https://user:pw@example.com', 'webhook URLs must not contain a user name or password'],
    ['https://user@example.com', 'webhook URLs must not contain a user name or password'],
    ['ftp://example.com', 'webhook URLs must use https, not ftp'],
    ['http://example.com', 'webhook URLs must use https, not http'],
    ['https://example.com/#done', 'webhook URLs must not contain a fragment (#...)'],
    ['example.com/hook', 'the webhook URL is not a valid absolute URL'],
    ['https://999.1.1.1/', 'the webhook URL is not a valid absolute URL'],
    [`https://example.com/${'a'.repeat(2040)}`, 'webhook URLs must be at most 2048 characters long'],
    [
      `https://example.com/${'€'.repeat(250)}`,
      'webhook URLs must be at most 2048 characters long once percent-encoded, and this one has 2270',
    ],
  ])('%s', async (raw, expected) => {
    const { asked, resolve } = fakeResolver({ 'example.com': [{ address: '93.184.216.34', family: 4 }] })
    expect(await refusal(raw, rules({ resolve }))).toBe(expected)
    expect(asked).toEqual([])
  })
})

describe('checkWebhookUrl with a host name', () => {
  const PUBLIC_4: ResolvedAddress = { address: '93.184.216.34', family: 4 }
  const PUBLIC_6: ResolvedAddress = { address: '2606:4700::1111', family: 6 }

  it('accepts a name whose every address is public and returns the first', async () => {
    const { asked, resolve } = fakeResolver({ 'hooks.example.com': [PUBLIC_6, PUBLIC_4] })
    const checked = await checkWebhookUrl('https://hooks.example.com/pets?x=1', rules({ resolve }))
    expect(checked.url.href).toBe('https://hooks.example.com/pets?x=1')
    expect(checked.address).toEqual(PUBLIC_6)
    expect(asked).toEqual(['hooks.example.com'])
  })

  it('refuses a name that also resolves to a private address, without telling which (no map of the network)', async () => {
    const { resolve } = fakeResolver({ 'hooks.example.com': [PUBLIC_4, { address: '10.0.0.1', family: 4 }] })
    expect(await refusal('https://hooks.example.com/', rules({ resolve }))).toBe(
      'the host resolves to a private address: webhook URLs must reach public addresses',
    )
  })

  it('refuses a name that also resolves to an IPv4-mapped loopback', async () => {
    const { resolve } = fakeResolver({
      'hooks.example.com': [PUBLIC_6, { address: '::ffff:127.0.0.1', family: 6 }],
    })
    expect(await refusal('https://hooks.example.com/', rules({ resolve }))).toContain('a loopback address')
  })

  it('refuses a name with no answer or a resolver error as not resolving', async () => {
    const { resolve } = fakeResolver({ 'broken.example.com': new Error('ENOTFOUND') })
    expect(await refusal('https://nothing.example.com/', rules({ resolve }))).toBe(
      'the host nothing.example.com does not resolve',
    )
    expect(await refusal('https://broken.example.com/', rules({ resolve }))).toBe(
      'the host broken.example.com does not resolve',
    )
  })

  it('refuses a name whose DNS server never answers, at the resolver deadline, saying so', async () => {
    const silent = createSocket('udp4')
    await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve))
    try {
      const server = `127.0.0.1:${silent.address().port}`
      const resolve = createDnsResolve({ servers: [server], deadlineMs: 300 })
      expect(await refusal('https://hang.example.com/', rules({ resolve }))).toBe(
        'the host hang.example.com did not resolve in time: its DNS server does not answer',
      )
    } finally {
      silent.close()
    }
  })

  it('refuses an answer that is not an IP address', async () => {
    const { resolve } = fakeResolver({ 'odd.example.com': [{ address: '0177.0.0.1', family: 4 }] })
    expect(await refusal('https://odd.example.com/', rules({ resolve }))).toBe(
      'the host odd.example.com does not resolve to an IP address',
    )
  })

  it('refuses localhost through the system resolver', async () => {
    const message = await refusal('https://localhost/', rules({ resolve: createDnsResolve() }))
    expect(message).toMatch(/a loopback address/)
  })
})

describe('checkWebhookUrl accepts', () => {
  it('public literal addresses without a lookup, brackets removed', async () => {
    const { asked, resolve } = fakeResolver()
    const v4 = await checkWebhookUrl('https://93.184.216.34/hook', rules({ resolve }))
    const v6 = await checkWebhookUrl('https://[2606:4700::1111]:8443/hook', rules({ resolve }))
    expect(v4.address).toEqual({ address: '93.184.216.34', family: 4 })
    expect(v6.address).toEqual({ address: '2606:4700::1111', family: 6 })
    expect(asked).toEqual([])
  })

  it('plain http when allowHttp (staging)', async () => {
    const checked = await checkWebhookUrl('http://93.184.216.34/', rules({ allowHttp: true }))
    expect(checked.url.protocol).toBe('http:')
  })

  it('any address and plain http when allowPrivate', async () => {
    const checked = await checkWebhookUrl('http://127.0.0.1:1234/', rules({ allowPrivate: true }))
    expect(checked.address).toEqual({ address: '127.0.0.1', family: 4 })
    const { resolve } = fakeResolver({ 'hook.internal': [{ address: '10.0.0.1', family: 4 }] })
    const named = await checkWebhookUrl('http://hook.internal/', rules({ allowPrivate: true, resolve }))
    expect(named.address).toEqual({ address: '10.0.0.1', family: 4 })
  })

  it('but still not credentials nor a name that does not resolve when allowPrivate', async () => {
    const allowPrivate = rules({ allowPrivate: true })
    expect(await refusal('http://u:p@127.0.0.1/', allowPrivate)).toMatch(/user name or password/)
    expect(await refusal('http://nowhere.internal/', allowPrivate)).toMatch(/does not resolve/)
  })
})

describe('pinnedLookup', () => {
  const lookup = pinnedLookup({ address: '2606:4700::1111', family: 6 })

  it('answers a list when Node asks for all addresses', () => {
    let answer: unknown
    lookup('hooks.example.com', { all: true, hints: 32 }, (...args) => {
      answer = args
    })
    expect(answer).toEqual([null, [{ address: '2606:4700::1111', family: 6 }]])
  })

  it('answers one address and its family otherwise', () => {
    let answer: unknown
    lookup('hooks.example.com', { family: 4 }, (...args) => {
      answer = args
    })
    expect(answer).toEqual([null, '2606:4700::1111', 6])
  })
})
