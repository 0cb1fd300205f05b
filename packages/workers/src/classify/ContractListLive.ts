import {
  type ContractEntry,
  type ContractIndex,
  ContractListInvalid,
  mergeContractLists,
  parseContractList
} from "@scaledger/domain/classification/ContractList"
import { Config, Context, Duration, Effect, Either, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { ChainConfig, ROBINHOOD_CHAIN_ID } from "../chain/ChainConfig.js"

/** The contract list in force for the configured chain: the bundled list with `CONTRACT_LIST`'s entries over it. */
export class ContractList extends Context.Tag("@scaledger/workers/classify/ContractList")<ContractList, {
  readonly chainId: number
  readonly index: ContractIndex
}>() {}

const BUNDLED_URL = new URL("./contracts/bundled.json", import.meta.url)

export const bundledContracts = (): ReadonlyArray<ContractEntry> =>
  Either.getOrThrow(parseContractList("the bundled contract list", readFileSync(BUNDLED_URL, "utf8")))

const FETCH_TIMEOUT = Duration.seconds(15)

/** Reads `CONTRACT_LIST`: an http(s) URL is fetched once at start, anything else is a file path. */
const readSpec = (spec: string) =>
  /^https?:\/\//i.test(spec)
    ? Effect.tryPromise({
      try: async (signal) => {
        const response = await fetch(spec, { signal, redirect: "error" })
        if (!response.ok) throw new Error(`HTTP ${response.status}`)
        return await response.text()
      },
      catch: (error) =>
        new ContractListInvalid({
          origin: spec,
          message: `CONTRACT_LIST ${spec} could not be fetched: ${(error as Error).message}`
        })
    }).pipe(
      Effect.timeoutFail({
        duration: FETCH_TIMEOUT,
        onTimeout: () =>
          new ContractListInvalid({ origin: spec, message: `CONTRACT_LIST ${spec} did not answer in 15 s` })
      })
    )
    : Effect.try({
      try: () => readFileSync(spec, "utf8"),
      catch: (error) =>
        new ContractListInvalid({
          origin: spec,
          message: `CONTRACT_LIST ${spec} could not be read: ${(error as Error).message}`
        })
    })

/** The bundled list, then the entries of `spec` (if any) adding to it and overriding it by address. */
export const loadContractList = (chainId: number, spec: Option.Option<string>) =>
  Effect.gen(function*() {
    const bundled = bundledContracts()
    if (Option.isNone(spec) || spec.value.trim() === "") return mergeContractLists(chainId, bundled)
    const text = yield* readSpec(spec.value.trim())
    const extra = yield* parseContractList(`CONTRACT_LIST ${spec.value.trim()}`, text)
    return mergeContractLists(chainId, bundled, extra)
  })

/** Checks `CONTRACT_LIST` before anything starts: a bad list stops the start with one line naming it. */
export const checkContractList = Effect.gen(function*() {
  const chainId = yield* Config.integer("CHAIN_ID").pipe(Config.withDefault(ROBINHOOD_CHAIN_ID))
  const spec = yield* Config.option(Config.string("CONTRACT_LIST"))
  yield* loadContractList(chainId, spec)
})

/** Fails the start with a `ContractListInvalid` saying what is wrong with `CONTRACT_LIST`. */
export const ContractListLive = Layer.effect(
  ContractList,
  Effect.gen(function*() {
    const { chainId } = yield* ChainConfig
    const spec = yield* Config.option(Config.string("CONTRACT_LIST"))
    const index = yield* loadContractList(chainId, spec)
    yield* Effect.logInfo(`contract list: ${index.size} contracts for chain ${chainId}`)
    return { chainId, index }
  })
)
