import { readFileSync } from 'node:fs'
import { CONFIG_VARIABLES, type ConfigSchema } from '../src/config.schema.js'

/**
 * What the figure tests (docs-figures, readmes-figures) build their phrases with: each phrase is written
 * from a constant of the code, so that a constant that changes fails the test of the document quoting it.
 */

/** A document of the repository (`docs/rate-limits.md`), its lines joined: a phrase may be wrapped. */
export const documentText = (path: string) =>
  readFileSync(new URL(`../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ')

/** A number as the documents write it in prose, digits grouped: `10,000`. */
export const n = (value: number) => value.toLocaleString('en')

const WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten']

/** A small whole number as the documents spell it ("five days", "two weeks"); any other as digits. */
export const inWords = (value: number) => WORDS[value] ?? String(value)

/** `second` for 1,000 ms, as in "once a second" and "every second"; any other length in seconds. */
export const second = (ms: number) => (ms === 1_000 ? 'second' : `${ms / 1_000} seconds`)

/** Milliseconds as the documents write a delay: `5 s`, `30 min`, `10 h`. */
export function delay(ms: number): string {
  if (ms < 60_000) return `${ms / 1_000} s`
  if (ms < 3_600_000) return `${ms / 60_000} min`
  return `${ms / 3_600_000} h`
}

/** Whole days in `ms`. */
export const days = (ms: number) => ms / 86_400_000

/** A configuration variable's default, as `src/config.schema.ts` declares it. */
export function defaultOf(name: keyof typeof ConfigSchema.properties): string | number {
  const fallback = CONFIG_VARIABLES.find(([variable]) => variable === name)?.[1].default
  if (fallback === undefined) throw new Error(`${name} has no default`)
  return fallback
}

/** A numeric configuration variable's default. */
export function numberDefault(name: keyof typeof ConfigSchema.properties): number {
  const fallback = defaultOf(name)
  if (typeof fallback !== 'number') throw new Error(`${name}'s default is not a number`)
  return fallback
}
