import { getAddress } from "viem"

const MAX_CACHED = 10_000
const cache = new Map<string, string>()

/**
 * The EIP-55 form of an address (throws on a malformed one). Cached: a backfill checksums the same few addresses
 * (tokens, the wallet, its counterparties) thousands of times, and each is a keccak hash.
 */
export const checksummed = (address: string): string => {
  const key = address.toLowerCase()
  const known = cache.get(key)
  if (known !== undefined) return known
  const value = getAddress(key)
  if (cache.size >= MAX_CACHED) cache.clear()
  cache.set(key, value)
  return value
}
