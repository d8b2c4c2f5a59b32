import { pbkdf2 } from 'node:crypto'
import { createSocket, type Socket } from 'node:dgram'
import dnsPacket from 'dns-packet'
import { afterEach, expect, it } from 'vitest'
import { createDnsResolve, MAX_TTL_S } from './resolve.js'

/**
 * A real DNS server on a loopback UDP port: `a.test` answers (TTL 60 s and 30 s), `day.test` (A only, TTL a
 * day), `v4only.test` answers A and never AAAA, `hang…` never answers, any other name does not exist.
 */
async function startDnsServer(): Promise<{ server: string; queries: string[]; socket: Socket }> {
  const socket = createSocket('udp4')
  const queries: string[] = []
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message)
    const question = query.questions?.[0]
    if (!question) return
    queries.push(`${question.name} ${question.type}`)
    if (question.name.startsWith('hang')) return
    if (question.name === 'v4only.test' && question.type === 'AAAA') return
    const answers =
      question.name === 'a.test'
        ? question.type === 'A'
          ? [{ type: 'A' as const, name: 'a.test', ttl: 60, data: '93.184.216.34' }]
          : [{ type: 'AAAA' as const, name: 'a.test', ttl: 30, data: '2606:2800:220:1::1' }]
        : (question.name === 'day.test' || question.name === 'v4only.test') && question.type === 'A'
          ? [{ type: 'A' as const, name: question.name, ttl: 86_400, data: '93.184.216.34' }]
          : []
    const response = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (answers.length ? 0 : 3),
      questions: query.questions,
      answers,
    })
    socket.send(response, peer.port, peer.address)
  })
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve))
  return { server: `127.0.0.1:${socket.address().port}`, queries, socket }
}

const sockets: Socket[] = []
afterEach(() => {
  for (const socket of sockets.splice(0)) socket.close()
})

it('answers A and AAAA from DNS and keeps them for the shortest TTL', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  let clock = 1_000_000
  const resolve = createDnsResolve({ servers: [dns.server], now: () => clock })
  expect(await resolve('a.test')).toEqual([
    { address: '93.184.216.34', family: 4 },
    { address: '2606:2800:220:1::1', family: 6 },
  ])
  expect(dns.queries).toEqual(['a.test A', 'a.test AAAA'])
  clock += 29_000
  await resolve('A.test')
  expect(dns.queries).toHaveLength(2)
  clock += 1_000
  await resolve('a.test')
  expect(dns.queries).toHaveLength(4)
})

it('shares one lookup under way, and refuses a name that does not exist', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  const resolve = createDnsResolve({ servers: [dns.server] })
  await Promise.all([resolve('a.test'), resolve('a.test'), resolve('a.test')])
  expect(dns.queries).toHaveLength(2)
  await expect(resolve('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
})

it('keeps an answer 5 minutes at most whatever its TTL, and a name that does not exist 5 s', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  let clock = 1_000_000
  const resolve = createDnsResolve({ servers: [dns.server], now: () => clock })
  const asked = (name: string) => dns.queries.filter((query) => query.startsWith(`${name} `)).length
  await resolve('day.test')
  await expect(resolve('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
  expect([asked('day.test'), asked('nothing.test')]).toEqual([2, 2])
  clock += 4_999
  await resolve('day.test')
  await expect(resolve('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
  expect([asked('day.test'), asked('nothing.test')]).toEqual([2, 2])
  clock += 1
  await expect(resolve('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' })
  expect(asked('nothing.test')).toBe(4)
  clock = 1_000_000 + MAX_TTL_S * 1000 - 1
  await resolve('day.test')
  expect(asked('day.test')).toBe(2)
  clock += 1
  await resolve('day.test')
  expect(asked('day.test')).toBe(4)
})

it('gives up on a server that never answers at the deadline, holding no thread of the pool meanwhile', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  const resolve = createDnsResolve({ servers: [dns.server], deadlineMs: 1_500 })
  const order: string[] = []
  // Eight names that hang: getaddrinfo would hold libuv's 4 threads until they ended.
  const hung = Array.from({ length: 8 }, (_, index) =>
    resolve(`hang${index}.test`).then(
      () => order.push('resolved'),
      (error: NodeJS.ErrnoException) => order.push(`hung: ${error.code}`),
    ),
  )
  // Work that needs the thread pool finishes first, and so does another name.
  await new Promise((resolve, reject) =>
    pbkdf2('x', 'y', 1, 32, 'sha256', (error) => (error ? reject(error) : resolve(order.push('pool')))),
  )
  await resolve('a.test').then(() => order.push('a.test'))
  await Promise.all(hung)
  expect(order.slice(0, 2)).toEqual(['pool', 'a.test'])
  expect(order.slice(2)).toEqual(Array(8).fill('hung: ECANCELLED'))
})

it('does not wait out the deadline for AAAA once A has answered', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  const resolve = createDnsResolve({ servers: [dns.server], deadlineMs: 20_000 })
  let timer: NodeJS.Timeout | undefined
  const halfTheDeadline = new Promise((resolve) => {
    timer = setTimeout(resolve, 10_000, 'still waiting')
  })
  const answer = await Promise.race([resolve('v4only.test'), halfTheDeadline])
  clearTimeout(timer)
  expect(answer).toEqual([{ address: '93.184.216.34', family: 4 }])
  expect(dns.queries).toEqual(['v4only.test A', 'v4only.test AAAA'])
})

it('knows localhost is loopback without asking', async () => {
  const dns = await startDnsServer()
  sockets.push(dns.socket)
  const resolve = createDnsResolve({ servers: [dns.server] })
  expect(await resolve('hooks.localhost')).toContainEqual({ address: '127.0.0.1', family: 4 })
  expect(dns.queries).toEqual([])
})
