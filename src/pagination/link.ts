/**
 * RFC 8288 `Link` to the next page (CONTRACT §3): the listing's own address under the public base address,
 * its filters as given, and the cursor. Parameters left undefined are left out.
 *
 * @example nextPageLink('https://api.example/v1', '/pets', { limit: 20, status: 'sold' }, 'djE6...')
 */
export function nextPageLink(
  baseUrl: string,
  path: string,
  query: Readonly<Record<string, string | number | undefined>>,
  cursor: string,
): string {
  // On every listing's hot path: one string built up, no intermediate arrays.
  let link = `<${baseUrl}${path}?`
  for (const name in query) {
    const value = query[name]
    if (value !== undefined) link += `${name}=${encodeURIComponent(value)}&`
  }
  return `${link}cursor=${cursor}>; rel="next"`
}
