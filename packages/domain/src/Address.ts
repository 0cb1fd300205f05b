import { keccak_256 } from "@noble/hashes/sha3"
import { Either } from "effect"
import { InvalidAddress } from "./Errors.js"
import { shownValue } from "./ShownValue.js"

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/
const encoder = new TextEncoder()

/** EIP-55 mixed-case checksum form of a 20-byte hex address (input already known to be well-formed). */
const checksum = (address: string): string => {
  const lower = address.slice(2).toLowerCase()
  const hash = keccak_256(encoder.encode(lower))
  let out = "0x"
  for (let i = 0; i < 40; i++) {
    const nibble = (hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!
  }
  return out
}

export type AddressProblem = "not_hex_address" | "bad_checksum"

/**
 * Validates a public address and returns its EIP-55 checksummed form. All-lowercase and all-uppercase hex are
 * accepted as unchecksummed; a mixed-case address must carry a correct checksum (a typo guard).
 */
export const parseAddress = (input: string): Either.Either<string, AddressProblem> => {
  if (!HEX_ADDRESS.test(input)) return Either.left("not_hex_address")
  const body = input.slice(2)
  const normalized = checksum(input)
  const mixedCase = body !== body.toLowerCase() && body !== body.toUpperCase()
  if (mixedCase && normalized !== input) return Either.left("bad_checksum")
  return Either.right(normalized)
}

export const toChecksumAddress = (input: string): string => {
  if (!HEX_ADDRESS.test(input)) throw new Error(`not a hex address: ${input}`)
  return checksum(input)
}

/** The form addresses are compared and indexed by: lowercase hex. */
/** `400 invalid_address` for a text `parseAddress` refused, quoting it by its start when it is long. */
export const invalidAddress = (input: string, problem: AddressProblem): InvalidAddress =>
  new InvalidAddress({
    message: problem === "bad_checksum"
      ? `${shownValue(input)} is mixed-case but its EIP-55 checksum does not match; check for a typo.`
      : `${shownValue(input)} is not a public address (0x followed by 40 hex digits).`,
    details: { address: shownValue(input), reason: problem }
  })

export const addressKey = (address: string): string => address.toLowerCase()
