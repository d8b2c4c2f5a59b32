import { PetstoreError } from '@petstore/client'
import { describe, expect, it } from 'vitest'
import { describeNetworkError } from './network-errors.js'

/** What the client throws when fetch got no response: its error, fetch's TypeError, then the socket's. */
function noResponse(cause: Error): PetstoreError {
  const fetchFailed = new TypeError('fetch failed', { cause })
  return new PetstoreError({ status: 0, code: 'network_error', message: 'no response', cause: fetchFailed })
}

function withCode(message: string, code: string): Error {
  return Object.assign(new Error(message), { code })
}

describe('describeNetworkError', () => {
  it.each([
    ['ECONNREFUSED', 'connection refused: is the service running and PETSTORE_URL right?'],
    ['ENOTFOUND', 'host not found: check the host name in PETSTORE_URL'],
    ['ETIMEDOUT', 'timed out: is the host reachable and the port open?'],
    ['UND_ERR_CONNECT_TIMEOUT', 'timed out connecting: is the host reachable and the port open?'],
  ])('says what %s likely means', (code, reason) => {
    expect(describeNetworkError(noResponse(withCode(`connect ${code}`, code)))).toBe(reason)
  })

  it('finds the code of the first address tried in an AggregateError', () => {
    const refused = withCode('connect ECONNREFUSED ::1:8080', 'ECONNREFUSED')
    const aggregate = new AggregateError([refused, withCode('connect ECONNREFUSED', 'ECONNREFUSED')], '')
    expect(describeNetworkError(noResponse(aggregate))).toMatch(/^connection refused: /)
  })

  it('names a certificate the client refused, with what to do about a private CA', () => {
    const selfSigned = withCode('self-signed certificate', 'DEPTH_ZERO_SELF_SIGNED_CERT')
    expect(describeNetworkError(noResponse(selfSigned))).toBe(
      'certificate not accepted (self-signed certificate); for a private CA set NODE_EXTRA_CA_CERTS',
    )
    const expired = withCode('certificate has expired', 'CERT_HAS_EXPIRED')
    expect(describeNetworkError(noResponse(expired))).toMatch(
      /^certificate not accepted \(certificate has expired\)/,
    )
  })

  it('explains the ports fetch refuses, and otherwise gives the deepest message', () => {
    expect(describeNetworkError(noResponse(new Error('bad port')))).toMatch(/^fetch refuses that port/)
    expect(describeNetworkError(noResponse(new Error('other side closed')))).toBe('other side closed')
  })
})
