import { describe, expect, test } from 'vitest'
import { hasKeyShape, redactKeys, redactKeysInTarget } from './redact-keys.js'

const key = `ps_live_${'a1B2-_'.repeat(5)}xy`

describe('redactKeys', () => {
  test('replaces every key-shaped run, of either environment', () => {
    expect(redactKeys(`agent ${key} and ps_test_zz`)).toBe('agent [redacted] and [redacted]')
  })

  test('leaves other text alone', () => {
    expect(redactKeys('ps_other and ps_liv')).toBe('ps_other and ps_liv')
    expect(hasKeyShape('GET /v1/pets?limit=2')).toBe(false)
  })
})

describe('redactKeysInTarget', () => {
  test.each([
    [`/v1/pets?api%5Fkey=${key}`, '/v1/pets?api_key=[redacted]'],
    [`/v1/pets?limit=1;api_key=${key}`, '/v1/pets?limit=1;api_key=[redacted]'],
    [`/v1/pets?a=${key}`, '/v1/pets?a=[redacted]'],
    [`/v1/pets?access_token%3D${key}`, '/v1/pets?access_token=[redacted]'],
    [`/v1/pets/${key}`, '/v1/pets/[redacted]'],
    [`/v1/pets?a=ps%5Flive%5F${key.slice(8)}`, '/v1/pets?a=[redacted]'],
    [`/v1/pets?a=%2570s_live_${key.slice(8)}`, '/v1/pets?a=[redacted]'],
  ])('%s is logged as %s', (target, logged) => {
    expect(redactKeysInTarget(target)).toBe(logged)
  })

  test('a target without a key keeps its encoding', () => {
    expect(redactKeysInTarget('/v1/pets?status=sold&x=%22%E0')).toBe('/v1/pets?status=sold&x=%22%E0')
  })
})
