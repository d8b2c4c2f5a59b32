import { promisify } from 'node:util'
import * as zlib from 'node:zlib'

/**
 * Brotli's slowest setting, since a body is compressed once per process, off the event loop, and sent in
 * gzip until its brotli is ready. On swagger-ui-bundle.js (1,684,244 bytes), alone on one core: quality 5
 * gives 398,731 bytes in 0.08 s, quality 9 386,790 in 0.23 s, quality 11 353,627 (11% less than 5) in 2.7 s.
 */
export const BROTLI_QUALITY = 11
/** gzip's level 9 costs a third more time than the default 6 for 0.3% less: it too runs once. */
export const GZIP_LEVEL = 9

const brotliCompress = promisify(zlib.brotliCompress)
const gzip = promisify(zlib.gzip)
const deflateRaw = promisify(zlib.deflateRaw)

let started = 0

/** How many compressions this process has started: a test shows that requests start none. */
export function compressionCount(): number {
  return started
}

/**
 * `body` compressed on libuv's thread pool, off the event loop. With `open`, the stream is flushed to a byte
 * boundary and left unfinished, for more to be appended (compressed-prefix.ts); gzip's is then raw DEFLATE,
 * without gzip's header and trailer.
 */
export function compress(coding: 'br' | 'gzip', body: Buffer, { open = false } = {}): Promise<Buffer> {
  started++
  const { BROTLI_OPERATION_FINISH, BROTLI_OPERATION_FLUSH, Z_SYNC_FLUSH } = zlib.constants
  if (coding === 'gzip') {
    return inTurn(false, () =>
      open
        ? deflateRaw(body, { level: GZIP_LEVEL, finishFlush: Z_SYNC_FLUSH })
        : gzip(body, { level: GZIP_LEVEL }),
    )
  }
  return inTurn(true, () =>
    brotliCompress(body, {
      finishFlush: open ? BROTLI_OPERATION_FLUSH : BROTLI_OPERATION_FINISH,
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
  )
}

const waiting: { slow: boolean; run: () => void }[] = []
let running = false

/**
 * Runs compressions one at a time, the fast ones (gzip) before any slow one waiting (brotli at quality 11, up
 * to seconds): they take at most one of the thread pool's four threads (file reads, crypto and other zlib
 * work share them) and one core, and every body has its gzip within moments of being asked for.
 */
function inTurn(slow: boolean, job: () => Promise<Buffer>): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    waiting.push({ slow, run: () => job().then(resolve, reject).finally(next) })
    if (!running) next()
  })
}

function next(): void {
  const fast = waiting.findIndex((each) => !each.slow)
  const [turn] = waiting.splice(fast === -1 ? 0 : fast, 1)
  running = turn !== undefined
  turn?.run()
}
