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
  const parameters = Object.entries(query)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
  return `<${baseUrl}${path}?${[...parameters, `cursor=${cursor}`].join('&')}>; rel="next"`
}
