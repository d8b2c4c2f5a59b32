import { expect } from 'vitest'
import { PetstoreError } from '../../client/src/index.js'

export { type ServedApp, serveTestApp } from '../helpers.js'

export interface SentRequest {
  method: string
  url: string
  /** Whether the client sent it while one of its rate-limit waits was pending. */
  duringWait: boolean
}

export interface Refusal {
  code: string
  retryAfterSeconds: number
}

/**
 * A fetch that records what the client sends and every 429 it gets back, around the real fetch. The
 * client's `sleep` sets `waiting` so that a request sent during a wait is seen.
 */
export function recordingFetch() {
  const sent: SentRequest[] = []
  const refusals: Refusal[] = []
  const state = { waiting: 0 }
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    sent.push({ method: init.method ?? 'GET', url: input, duringWait: state.waiting > 0 })
    const response = await globalThis.fetch(input, init)
    if (response.status === 429) {
      const body = (await response.clone().json()) as { code: string }
      refusals.push({ code: body.code, retryAfterSeconds: Number(response.headers.get('retry-after')) })
    }
    return response
  }
  return { fetch, sent, refusals, state }
}

/** The PetstoreError a call rejects with (and fails the test if it resolves or throws anything else). */
export async function failure(promise: Promise<unknown>): Promise<PetstoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).toBeInstanceOf(PetstoreError)
  return error as PetstoreError
}
