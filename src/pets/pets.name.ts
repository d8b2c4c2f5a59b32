import { AppError } from '../errors.js'
import { refuseLoneSurrogates } from '../unicode.js'

const MAX_NAME_CODE_POINTS = 100
// Unicode category Cc: C0 controls, DEL and C1 controls.
const CONTROL_CHARACTER = /\p{Cc}/u

/** The name as stored: trimmed as String.prototype.trim does, otherwise untouched (no normalisation). */
export function normalisePetName(sent: string): string {
  const name = sent.trim()
  // A string of more than 2 * 100 UTF-16 units always has more than 100 code points.
  const codePoints = name.length > 2 * MAX_NAME_CODE_POINTS ? Number.POSITIVE_INFINITY : [...name].length
  if (codePoints < 1 || codePoints > MAX_NAME_CODE_POINTS) {
    throw new AppError('invalid_request', 'name must be 1 to 100 characters long after trimming white space')
  }
  if (CONTROL_CHARACTER.test(name))
    throw new AppError('invalid_request', 'name must not contain control characters')
  refuseLoneSurrogates('name', name)
  return name
}
