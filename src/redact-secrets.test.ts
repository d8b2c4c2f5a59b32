import { describe, expect, test } from 'vitest'
import { hasSecretShape, redactSecrets, redactSecretsInTarget } from './redact-secrets.js'

const key = `ps_live_${'a1B2-_'.repeat(5)}xy`
/** A webhook signing secret as webhooks/signature.ts makes one: base64, with its `+`, `/` and `=`. */
const secret = 'whsec_Q2xpZW50+U2VjcmV0/c2lnbmluZ3M='

describe('redactSecrets', () => {
  test('replaces every key-shaped run, of either environment', () => {
    expect(redactSecrets(`agent ${key} and ps_test_zz`)).toBe('agent [redacted] and [redacted]')
  })

  test('replaces a webhook secret, whole', () => {
    expect(redactSecrets(`signing with ${secret}, then`)).toBe('signing with [redacted], then')
  })

  test('leaves other text alone', () => {
    expect(redactSecrets('ps_other and ps_liv')).toBe('ps_other and ps_liv')
    expect(redactSecrets('the secret, `whsec_…`, once')).toBe('the secret, `whsec_…`, once')
    expect(hasSecretShape('GET /v1/pets?limit=2')).toBe(false)
  })
})

describe('redactSecretsInTarget', () => {
  test.each([
    [`/v1/pets?api%5Fkey=${key}`, '/v1/pets?api_key=[redacted]'],
    [`/v1/pets?limit=1;api_key=${key}`, '/v1/pets?limit=1;api_key=[redacted]'],
    [`/v1/pets?a=${key}`, '/v1/pets?a=[redacted]'],
    [`/v1/pets?access_token%3D${key}`, '/v1/pets?access_token=[redacted]'],
    [`/v1/pets/${key}`, '/v1/pets/[redacted]'],
    [`/v1/pets?a=ps%5Flive%5F${key.slice(8)}`, '/v1/pets?a=[redacted]'],
    [`/v1/pets?a=%2570s_live_${key.slice(8)}`, '/v1/pets?a=[redacted]'],
    [`/v1/nothing/${secret}`, '/v1/nothing/[redacted]'],
    [`/v1/nothing/${encodeURIComponent(secret)}`, '/v1/nothing/[redacted]'],
    [`/v1/pets?a=whsec%5F${secret.slice(6)}`, '/v1/pets?a=[redacted]'],
  ])('%s is logged as %s', (target, logged) => {
    expect(redactSecretsInTarget(target)).toBe(logged)
  })

  test('a target without a key keeps its encoding', () => {
    expect(redactSecretsInTarget('/v1/pets?status=sold&x=%22%E0')).toBe('/v1/pets?status=sold&x=%22%E0')
  })
})
