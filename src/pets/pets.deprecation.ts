/**
 * getPet is deprecated (spec: Versioning) and removed on 5 December 2030. The deprecation instant is
 * not in the spec; we date it from the start of 2026, when v1 shipped with the operation deprecated.
 */
export const GET_PET_DEPRECATED_AT = Date.UTC(2026, 0, 1)
export const GET_PET_SUNSET_AT = Date.UTC(2030, 11, 5)

const DEPRECATION = `@${GET_PET_DEPRECATED_AT / 1000}`
const SUNSET = new Date(GET_PET_SUNSET_AT).toUTCString()

/**
 * Headers of every authenticated getPet response (RFC 9745 Deprecation, RFC 8594 Sunset). The successor is
 * the listing of that one pet, `/pets?id=<petId>` (CONTRACT §11), when the path names an id in its canonical
 * form; else (a 400 for `/pets/abc`) the listing itself.
 */
export function deprecationHeaders(publicUrl: string, petId: unknown): Record<string, string> {
  const successor = /^[1-9]\d{0,15}$/.test(String(petId)) ? `/pets?id=${petId}` : '/pets'
  return {
    deprecation: DEPRECATION,
    sunset: SUNSET,
    link: `<${publicUrl}${successor}>; rel="successor-version"`,
  }
}
