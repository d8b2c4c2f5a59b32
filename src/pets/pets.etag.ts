import type { PetRecord } from './pets.repository.js'

/** A strong validator of the pet's current state: its id and version, which every change moves on. */
export const etagOf = (record: Pick<PetRecord, 'pet' | 'version'>) => `"${record.pet.id}-${record.version}"`

const ENTITY_TAG = /^(W\/)?"([^"]*)"$/

/**
 * The versions of pet `id` an If-Match header names (RFC 9110 §13.1.1: strong comparison, so weak tags
 * never match): undefined for `*` (any current version), an empty list when none could match.
 */
export function ifMatchVersions(header: string, id: number): number[] | undefined {
  if (header.trim() === '*') return undefined
  const versions: number[] = []
  for (const item of header.split(',')) {
    const match = ENTITY_TAG.exec(item.trim())
    if (!match || match[1]) continue
    const [tagId, version] = (match[2] ?? '').split('-')
    if (tagId === String(id) && version && /^\d{1,15}$/.test(version)) versions.push(Number(version))
  }
  return versions
}
