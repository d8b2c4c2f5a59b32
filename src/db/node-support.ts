/**
 * Node 24.19 and later 24.x releases abort the process when they free a better-sqlite3 12 statement or
 * database outside JavaScript: at exit, or in an idle garbage collection (nodejs/node#65446, open). Node 20,
 * 22, 24 up to 24.18 and 26 are not affected; better-sqlite3 13 is not, but needs Node 22 or later.
 * Returns the warning to log when the SQLite store runs on an affected Node, else undefined.
 */
export function sqliteOnNodeWarning(nodeVersion: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = nodeVersion.split('.').map(Number)
  if (major !== 24 || minor < 19) return undefined
  return (
    `Node ${nodeVersion} may abort this process when it frees a SQLite statement (nodejs/node#65446): ` +
    'run the SQLite store on Node 22, 24.18 or 26, or use PostgreSQL'
  )
}
