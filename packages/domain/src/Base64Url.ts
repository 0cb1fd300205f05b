/**
 * Base64url (RFC 4648 §5, unpadded) of UTF-8 text, without Node's `Buffer`: the domain package runs wherever
 * `TextEncoder` does. Decoding takes what `Buffer.from(text, "base64url")` takes of the alphabet: padding is ignored
 * and leftover bits of an incomplete last group are dropped; invalid UTF-8 reads as U+FFFD.
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const VALUES = new Map([...ALPHABET].map((c, i) => [c, i]))

export const encodeBase64Url = (text: string): string => {
  const bytes = new TextEncoder().encode(text)
  let out = ""
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0)
    const chars = i + 2 < bytes.length ? 4 : i + 1 < bytes.length ? 3 : 2
    for (let k = 0; k < chars; k++) out += ALPHABET[(n >> (18 - 6 * k)) & 63]
  }
  return out
}

/** The text of a base64url string; characters outside the alphabet (padding) are skipped. */
export const decodeBase64Url = (encoded: string): string => {
  const bytes: Array<number> = []
  let bits = 0
  let value = 0
  for (const c of encoded) {
    const v = VALUES.get(c)
    if (v === undefined) continue
    value = (value << 6) | v
    bits += 6
    if (bits >= 8) {
      bits -= 8
      bytes.push((value >> bits) & 0xff)
    }
  }
  return new TextDecoder().decode(new Uint8Array(bytes))
}
