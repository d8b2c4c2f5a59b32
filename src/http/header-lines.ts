/** How many times a header was sent (Node joins or drops repeats); `rawHeaders` alternates names and values. */
export function countHeader(rawHeaders: readonly string[], name: string): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) count++
  return count
}
