import type { PetRecord } from './pets.repository.js'

/** A strong validator of the pet's current state: its id and version, which every change moves on. */
export const etagOf = (record: Pick<PetRecord, 'pet' | 'version'>) => `"${record.pet.id}-${record.version}"`

const ENTITY_TAG = /^(W\/)?"([^"]*)"$/
/** The opaque part of a tag `etagOf` writes: canonical decimals only, so a tag matches octet for octet or not at all. */
const PET_TAG = /^([1-9]\d{0,15})-([1-9]\d{0,14})$/

/**
 * The versions of pet `id` an If-Match header names (RFC 9110 §13.1.1: strong comparison, so weak tags
 * never match, and `"20-04"` or `"20-5-x"` are not `"20-4"` or `"20-5"`): undefined for `*` (any current
 * version), an empty list when none could match.
 */
export function ifMatchVersions(header: string, id: number): number[] | undefined {
  if (header.trim() === '*') return undefined
  const versions: number[] = []
  for (const item of header.split(',')) {
    const match = ENTITY_TAG.exec(item.trim())
    if (!match || match[1]) continue
    const [, tagId, version] = PET_TAG.exec(match[2] ?? '') ?? []
    if (tagId === String(id) && version !== undefined) versions.push(Number(version))
  }
  return versions
}
