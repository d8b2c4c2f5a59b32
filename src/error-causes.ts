/**
 * The error, its cause, the cause's cause...; an AggregateError (one per address tried, as Node's
 * connect gives when a host name has several) continues with its first. At most eight links.
 */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = []
  let current = error
  while (current !== undefined && current !== null && chain.length < 8) {
    chain.push(current)
    const { cause, errors } = current as { cause?: unknown; errors?: unknown }
    current = cause ?? (Array.isArray(errors) ? errors[0] : undefined)
  }
  return chain
}
