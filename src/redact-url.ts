/**
 * Text that may be a URL, with any password in it shown as `***`: the user-info password (up to the last
 * `@`, so a password with an unencoded `/`, `#` or `@` is covered too) and `password=` parameters. Works on
 * text that does not parse as a URL; text that is not a URL comes back unchanged.
 */
export function redactUrl(text: string): string {
  return text
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/?#@]*:)[\s\S]*@/i, '$1***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***')
}
