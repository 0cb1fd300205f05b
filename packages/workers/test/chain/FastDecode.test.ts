import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import { fastBlock, fastLogs } from "../../src/chain/rpc/FastDecode.js"
import { decodeAnswer, RpcBlock, RpcLog } from "../../src/chain/rpc/RpcSchemas.js"

const bySchemaLogs = decodeAnswer(Schema.Array(RpcLog), "eth_getLogs")
const bySchemaBlock = decodeAnswer(Schema.NullOr(RpcBlock), "eth_getBlockByNumber")
const logs = fastLogs(bySchemaLogs)
const block = fastBlock(bySchemaBlock)

const log = {
  address: "0x5fbdb2315678afecb367f032d93f642f64180aa3",
  topics: [
    "0xDDF252AD1BE2C89B69C2B068FC378DAA952BA7F163C4A11628F55A4DF523B3EF",
    "0x0000000000000000000000000000000000000000000000000000000000000000",
    "0x00000000000000000000000000000000000000000000000000000000000beef1"
  ],
  data: "0x0000000000000000000000000000000000000000000000000De0b6b3a7640000",
  blockNumber: "0x1a",
  blockHash: `0x${"AB".repeat(32)}`,
  transactionHash: `0x${"cd".repeat(32)}`,
  transactionIndex: "0x0",
  logIndex: "0x3",
  extra: "ignored"
}

const header = {
  number: "0x1a",
  hash: `0x${"AB".repeat(32)}`,
  parentHash: `0x${"cd".repeat(32)}`,
  timestamp: "0x6a5c1e00",
  logsBloom: "0x00"
}

describe("hand-checked logs and headers", () => {
  it("give what the Schemas give for every answer they accept", () => {
    for (
      const answer of [
        [],
        [log],
        [log, { ...log, removed: true, logIndex: "0x4" }],
        [{ ...log, blockTimestamp: "0x6a5c1e00" }],
        [{ ...log, topics: [] }]
      ]
    ) {
      const fast = logs(answer)
      expect(Either.isRight(fast)).toBe(true)
      expect(fast).toStrictEqual(bySchemaLogs(answer))
    }
    for (const answer of [null, header]) {
      expect(block(answer)).toStrictEqual(bySchemaBlock(answer))
    }
    expect(block(header)).toStrictEqual(Either.right({
      number: 26,
      hash: `0x${"ab".repeat(32)}`,
      parentHash: `0x${"cd".repeat(32)}`,
      timestamp: 1784421888
    }))
  })

  it("leave every answer they do not accept to the Schema: the same error as before", () => {
    for (
      const answer of [
        null,
        "0x",
        [{ ...log, address: "0x5fbdb2315678afecb367f032d93f642f64180aa" }],
        [log, { ...log, topics: ["0x01"] }],
        [{ ...log, blockTimestamp: null }],
        [{ ...log, removed: "no" }],
        [{ ...log, blockNumber: 26 }],
        [{ ...log, transactionHash: undefined }]
      ]
    ) {
      const fast = logs(answer)
      expect(Either.isLeft(fast)).toBe(true)
      expect(fast).toStrictEqual(bySchemaLogs(answer))
    }
    for (const answer of [1, { ...header, timestamp: 7 }, { ...header, hash: "0x01" }, { number: "0x1" }]) {
      const fast = block(answer)
      expect(Either.isLeft(fast)).toBe(true)
      expect(fast).toStrictEqual(bySchemaBlock(answer))
    }
  })
})
