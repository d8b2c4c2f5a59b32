/** Something the caller should know that is not an error: so far, the use of a deprecated operation. */
export interface PetstoreWarning {
  code: 'deprecated_operation'
  /** The operation, e.g. `getPet`. */
  operation: string
  /** When the service removes it, from the response's Sunset header (RFC 8594). */
  sunset: Date | undefined
  /** One sentence for a person. */
  message: string
}

/**
 * Tells `onWarning` once per operation, for the lifetime of the client, that a deprecated operation
 * was used, with the removal date the service sent. Responses without Deprecation or Sunset are
 * ignored.
 */
export function createDeprecationNotice(
  onWarning: (warning: PetstoreWarning) => void,
): (operation: string, replacement: string, headers: Headers) => void {
  const warned = new Set<string>()
  return (operation, replacement, headers) => {
    if (warned.has(operation) || !(headers.has('deprecation') || headers.has('sunset'))) return
    warned.add(operation)
    const sunsetAt = Date.parse(headers.get('sunset') ?? '')
    const sunset = Number.isNaN(sunsetAt) ? undefined : new Date(sunsetAt)
    const removal = sunset ? ` and will be removed on ${sunset.toISOString().slice(0, 10)}` : ''
    const message = `${operation} is deprecated${removal}; use ${replacement} instead`
    onWarning({ code: 'deprecated_operation', operation, sunset, message })
  }
}
