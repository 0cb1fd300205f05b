import { randomBytes } from "node:crypto"

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Random bytes drawn 4 KiB at a time: one call into the system's generator per ~150 ids instead of one per id.
const POOL_BYTES = 4096
let pool = randomBytes(POOL_BYTES)
let used = 0

const nextByte = (): number => {
  if (used === POOL_BYTES) {
    pool = randomBytes(POOL_BYTES)
    used = 0
  }
  const byte = pool[used]!
  pool[used++] = 0
  return byte
}

/** `length` characters drawn uniformly from base62 (rejection sampling, no modulo bias). */
export const randomBase62 = (length: number): string => {
  let out = ""
  while (out.length < length) {
    const byte = nextByte()
    if (byte < 248) out += BASE62[byte % 62]
  }
  return out
}

export const newId = (prefix: string): string => `${prefix}_${randomBase62(16)}`
