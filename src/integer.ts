/**
 * The one parser of integers written as text (environment variables, query strings, path parameters,
 * CLI options): plain decimal digits only, at most 16 of them (2^53 - 1 has 16). Anything else is NaN,
 * so `5abc`, `2.5`, `0x10`, ` 5`, `-1` and `1e3` never become numbers; callers check the range.
 */
export function parseInteger(text: string): number {
  return /^\d{1,16}$/.test(text) ? Number(text) : Number.NaN
}
