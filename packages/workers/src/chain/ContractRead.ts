/**
 * One generic contract read: `eth_call` of `functionName` at a block, its result decoded by the ABI and then checked
 * against a Schema (the value's type is proved, not assumed). A revert or an empty answer (no code at the address)
 * is `ContractReverted`; data the ABI cannot decode is `ChainDecodeError`.
 */
import { ChainDecodeError, ContractReverted, type ReadError, type RpcError } from "@scaledger/domain/chain/ChainErrors"
import { Effect, ParseResult, Schema } from "effect"
import { type Abi, decodeFunctionResult, encodeFunctionData, type Hex } from "viem"
import { errorFacts, REVERTED } from "./rpc/Failures.js"
import { decodeAnswer } from "./rpc/RpcSchemas.js"
import type { Transport } from "./rpc/Transport.js"

export interface ContractCall<A, I> {
  readonly address: string
  readonly abi: Abi
  readonly functionName: string
  readonly args?: ReadonlyArray<unknown>
  /** The block to read at; omitted: the latest. */
  readonly block?: number | undefined
  /** What the ABI-decoded result must be. */
  readonly result: Schema.Schema<A, I>
}

const HexData = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]*$/))
const decodeCallAnswer = decodeAnswer(HexData, "eth_call")

export const makeContractRead =
  (transport: Transport) => <A, I>(call: ContractCall<A, I>): Effect.Effect<A, ReadError> => {
    const { address, block, functionName } = call
    const at = block === undefined ? {} : { block }
    const what = `${functionName} at ${address}`
    const data = encodeFunctionData({ abi: call.abi, functionName, args: call.args } as never)
    const tag = block === undefined ? "latest" : `0x${block.toString(16)}`
    return transport.sendAt("eth_call", [{ to: address, data }, tag], block).pipe(
      Effect.catchTag(
        "RpcError",
        (error): Effect.Effect<never, RpcError | ContractReverted> =>
          REVERTED.test(error.message) || error.code === 3
            ? Effect.fail(new ContractReverted({ address, functionName, message: error.message, ...at }))
            : Effect.fail(error)
      ),
      Effect.flatMap(decodeCallAnswer),
      Effect.flatMap((result): Effect.Effect<unknown, ContractReverted | ChainDecodeError> =>
        result === "0x"
          ? Effect.fail(
            new ContractReverted({
              address,
              functionName,
              message: "empty return data (no contract at this address at that block?)",
              ...at
            })
          )
          : Effect.try({
            try: () => decodeFunctionResult({ abi: call.abi, functionName, data: result as Hex } as never) as unknown,
            catch: (e) => new ChainDecodeError({ what, message: errorFacts(e).message })
          })
      ),
      Effect.flatMap((value) =>
        Schema.decodeUnknown(call.result)(value).pipe(
          Effect.mapError((e) => new ChainDecodeError({ what, message: ParseResult.TreeFormatter.formatErrorSync(e) }))
        )
      )
    )
  }
