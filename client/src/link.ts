/** One link of an RFC 8288 Link header. */
export interface Link {
  url: string
  /** The link relation types, lower-cased (`rel="next prev"` gives two). */
  rels: string[]
}

const LINK = /<([^>]*)>((?:\s*;\s*[^;,]+)*)/g
const REL = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i

/**
 * The links of a Link header, in order.
 *
 * @example parseLinks('<https://x/v1/pets?cursor=abc>; rel="next"') // [{ url: 'https://x/v1/pets?cursor=abc', rels: ['next'] }]
 */
export function parseLinks(header: string | null): Link[] {
  if (!header) return []
  return [...header.matchAll(LINK)].map((match) => {
    const rel = REL.exec(match[2] ?? '')
    const rels = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/).filter(Boolean)
    return { url: match[1] ?? '', rels }
  })
}

/** The `cursor` of the `rel="next"` link: where the next page starts; undefined on the last page. */
export function nextCursor(header: string | null): string | undefined {
  const next = parseLinks(header).find((link) => link.rels.includes('next'))
  if (!next) return undefined
  return new URL(next.url, 'http://relative.invalid').searchParams.get('cursor') ?? undefined
}
