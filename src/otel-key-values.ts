/** OpenTelemetry's `key=value,key=value` variables, read as the SDK reads them. */

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry specification reads it: `key=value` pairs, comma-separated,
 * trimmed, percent-decoded, each key and value at most 255 characters; undefined when the SDK would
 * discard the whole variable (an unencoded `=`, an empty key, a bad escape, a value too long).
 */
export function resourceAttributesOf(text: string): Map<string, string> | undefined {
  const attributes = new Map<string, string>()
  for (const pair of text.split(',').filter((entry) => entry.trim() !== '')) {
    const parts = pair.split('=')
    const [key = '', value = ''] = parts.map((part) => part.trim())
    if (parts.length !== 2 || key === '') return undefined
    try {
      const [name, decoded] = [decodeURIComponent(key), decodeURIComponent(value)]
      if (name.length > 255 || decoded.length > 255) return undefined
      attributes.set(name, decoded)
    } catch {
      return undefined
    }
  }
  return attributes
}

/**
 * Whether the SDK's exporter reads this entry of OTEL_EXPORTER_OTLP_HEADERS (`parseKeyPairsIntoRecord` of
 * @opentelemetry/core): what comes before a `;` is `key=value`, both trimmed, neither empty, both
 * percent-decodable. An entry it cannot read, it drops without a word.
 */
export function isHeaderEntry(entry: string): boolean {
  const pair = entry.split(';')[0] ?? ''
  const separator = pair.indexOf('=')
  if (separator <= 0) return false
  const [key, value] = [pair.slice(0, separator).trim(), pair.slice(separator + 1).trim()]
  if (key === '' || value === '') return false
  try {
    decodeURIComponent(key)
    decodeURIComponent(value)
    return true
  } catch {
    return false
  }
}
