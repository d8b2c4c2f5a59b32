import { AppError } from './errors.js'

/**
 * The one check that text a client sent is valid Unicode, for every free-text field the service stores.
 * JSON can carry a lone surrogate (`"\ud800"`) that no UTF-8 can: stored, it would come back as U+FFFD,
 * changed without a word, so it is a 400 naming the field instead.
 *
 * @example refuseLoneSurrogates('description', body.description)
 */
export function refuseLoneSurrogates(field: string, text: string): void {
  if (!text.isWellFormed())
    throw new AppError('invalid_request', `${field} must be valid Unicode (no lone surrogates)`)
}
