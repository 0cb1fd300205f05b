import { Either, ParseResult, Schema } from "effect"

/** What a listed contract is, and so how a movement to or from it is classified (DECISIONS.md). */
export const ContractKind = Schema.Literal("dex", "lending", "bridge", "exchange")
export type ContractKind = typeof ContractKind.Type

export const ContractEntry = Schema.Struct({
  chainId: Schema.Number.pipe(Schema.int(), Schema.positive()),
  address: Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/)).annotations({
    description: "A 20-byte hex address; matched case-insensitively."
  }),
  kind: ContractKind,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  /** Where the entry comes from (the bundled list says it for each entry). */
  source: Schema.optional(Schema.String)
})
export type ContractEntry = typeof ContractEntry.Type

export const ContractListFile = Schema.Array(ContractEntry)

/** A contract list that could not be used: the service refuses to start with it. */
export class ContractListInvalid extends Schema.TaggedError<ContractListInvalid>()("ContractListInvalid", {
  origin: Schema.String,
  message: Schema.String
}) {}

/** Decodes a contract list (JSON text); unknown fields are rejected so a typo is not silently ignored. */
export const parseContractList = (
  origin: string,
  text: string
): Either.Either<ReadonlyArray<ContractEntry>, ContractListInvalid> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(
      new ContractListInvalid({ origin, message: `${origin} is not JSON: ${(error as Error).message}` })
    )
  }
  return Schema.decodeUnknownEither(ContractListFile, { onExcessProperty: "error", errors: "all" })(json).pipe(
    Either.mapLeft((error) =>
      new ContractListInvalid({
        origin,
        message: `${origin} is not a contract list (a JSON array of { chainId, address, kind, name }, kind one of ` +
          `dex, lending, bridge, exchange): ${
            ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) =>
              `${issue.path.length === 0 ? "(root)" : issue.path.map(String).join(".")}: ${issue.message}`
            ).join("; ")
          }`
      })
    )
  )
}

/** The contracts of one chain, by lowercase address. */
export type ContractIndex = ReadonlyMap<string, ContractEntry>

/** The bundled list, then each later list's entries adding to it and overriding it by (chain, address). */
export const mergeContractLists = (
  chainId: number,
  ...lists: ReadonlyArray<ReadonlyArray<ContractEntry>>
): ContractIndex => {
  const index = new Map<string, ContractEntry>()
  for (const list of lists) {
    for (const entry of list) if (entry.chainId === chainId) index.set(entry.address.toLowerCase(), entry)
  }
  return index
}
