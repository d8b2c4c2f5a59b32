import { crc32 } from 'node:zlib'
import {
  type ContentCoding,
  codedEtag,
  type Representation,
  type StaticAsset,
  type StaticAssetOptions,
} from './compressed.js'
import { compress } from './compression.js'

/** A long text compressed once, to be sent followed by a short suffix that varies per request. */
export interface CompressedPrefix {
  /**
   * The prefix followed by `suffix`, its identity tagged `etag`. Its brotli and gzip codings, once the
   * prefix's are ready, cost a copy of the suffix: never a compression.
   */
  withSuffix(suffix: string, etag: string, options: Omit<StaticAssetOptions, 'etag'>): StaticAsset
}

/**
 * Starts compressing `text` (off the event loop). The OpenAPI document differs per base address only in its
 * last few hundred bytes (the servers): its prefix is compressed once per process, and any base address,
 * however new, is then sent compressed for what a known one costs (CONTRACT §12).
 *
 * Both formats let a stream flushed to a byte boundary go on with stored, uncompressed data, which refers to
 * nothing before it: brotli as uncompressed meta-blocks (RFC 7932 §9.2) and a last empty one; gzip as stored
 * DEFLATE blocks (RFC 1951 §3.2.4), the last one final, then the CRC-32 and length of the whole (RFC 1952).
 */
export function createCompressedPrefix(text: string): CompressedPrefix {
  const prefix = Buffer.from(text)
  const prefixCrc = crc32(prefix)
  const ready: { br?: Buffer; deflate?: Buffer } = {}
  // A coding that failed (memory) is never offered: the text is still sent as it is.
  compress('gzip', prefix, { open: true }).then(
    (deflate) => (ready.deflate = deflate),
    () => {},
  )
  compress('br', prefix, { open: true }).then(
    (br) => (ready.br = br),
    () => {},
  )

  return {
    withSuffix(text, etag, options) {
      const suffix = Buffer.from(text)
      const length = prefix.length + suffix.length
      const { br, deflate } = ready
      // Node's crc32 of an empty Buffer can be 0, not `value`: once the Buffer has been sliced, zlib gets a NULL
      // pointer for it, and answers 0 (seen on Node 20).
      const crc = suffix.length === 0 ? prefixCrc : crc32(suffix, prefixCrc)
      const bodies: Partial<Record<ContentCoding, () => Buffer>> = {
        identity: () => Buffer.concat([prefix, suffix], length),
        br: br && (() => Buffer.concat([br, ...uncompressedMetaBlocks(suffix), LAST_EMPTY_META_BLOCK])),
        gzip:
          deflate &&
          (() => Buffer.concat([GZIP_HEADER, deflate, ...storedBlocks(suffix), gzipTrailer(crc, length)])),
      }
      const representations = new Map<ContentCoding, Representation>()
      for (const [coding, body] of Object.entries(bodies) as [ContentCoding, (() => Buffer) | undefined][]) {
        if (body) representations.set(coding, { etag: codedEtag(etag, coding), body })
      }
      return {
        contentType: options.contentType,
        cacheControl: options.cacheControl,
        headers: options.headers ?? {},
        compressible: true,
        representation: (coding) => representations.get(coding),
      }
    },
  }
}

/** ISLAST and ISLASTEMPTY set, then padding: the end of a brotli stream. */
const LAST_EMPTY_META_BLOCK = Buffer.from([0b11])
/** The longest meta-block: MLEN - 1 in at most six nibbles. */
const MAX_META_BLOCK = 1 << 24

/** `data` as uncompressed brotli meta-blocks; the stream before them must end on a byte boundary. */
function uncompressedMetaBlocks(data: Buffer): Buffer[] {
  const blocks: Buffer[] = []
  for (let at = 0; at < data.length; at += MAX_META_BLOCK) {
    const chunk = data.subarray(at, at + MAX_META_BLOCK)
    const mlen = chunk.length - 1
    // The fewest nibbles that hold MLEN - 1 (a longer field whose last nibble is 0 is invalid).
    const nibbles = mlen < 1 << 16 ? 4 : mlen < 1 << 20 ? 5 : 6
    // Least significant bit first: ISLAST 0, MNIBBLES - 4 (2 bits), MLEN - 1, ISUNCOMPRESSED 1; then zero
    // bits up to the byte boundary. At most 28 bits.
    const bits = ((nibbles - 4) << 1) | (mlen << 3) | (1 << (3 + 4 * nibbles))
    const header = Buffer.alloc(Math.ceil((4 + 4 * nibbles) / 8))
    for (let byte = 0; byte < header.length; byte++) header[byte] = (bits >>> (8 * byte)) & 0xff
    blocks.push(header, chunk)
  }
  return blocks
}

/** Magic, DEFLATE, no flags, no time, no extra-compression flag, OS Unix: what node:zlib writes. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3])
const MAX_STORED_BLOCK = 0xffff

/** `data` as stored DEFLATE blocks, the last one final (one empty final block for no data). */
function storedBlocks(data: Buffer): Buffer[] {
  const blocks: Buffer[] = []
  for (let at = 0; at === 0 || at < data.length; at += MAX_STORED_BLOCK) {
    const chunk = data.subarray(at, at + MAX_STORED_BLOCK)
    const header = Buffer.alloc(5)
    // BFINAL on the last block, BTYPE 00 (stored), then LEN and its one's complement NLEN.
    header[0] = at + MAX_STORED_BLOCK >= data.length ? 1 : 0
    header.writeUInt16LE(chunk.length, 1)
    header.writeUInt16LE(~chunk.length & 0xffff, 3)
    blocks.push(header, chunk)
  }
  return blocks
}

function gzipTrailer(crc: number, length: number): Buffer {
  const trailer = Buffer.alloc(8)
  trailer.writeUInt32LE(crc >>> 0, 0)
  trailer.writeUInt32LE(length % 2 ** 32, 4)
  return trailer
}
