import {
  createPublicClient,
  createWalletClient,
  custom,
  decodeEventLog,
  encodeDeployData,
  type Hex,
  keccak256,
  pad,
  toHex
} from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadArtifact, storageSlot } from "./artifacts.js"
import { startTestNode, type TestNode } from "./node.js"

const ONE = 10n ** 18n
const T0 = 1_800_000_000
const TOPIC_3 = "0x2205df4534432b2f60654a3fdb48737ffdaf3e9edb1a498bd985bc026b15b055"
const TOPIC_4 = "0x69cf817424dab3ffd3ee33ea83c0597f81c3f5a1e71a9007b18a99c8eee952d6"

const stock = loadArtifact("Stock")
const legacy = loadArtifact("LegacyStock")
const feedArtifact = loadArtifact("PriceFeed")

let node: TestNode
let issuer: Hex
let holder: Hex
let other: Hex

const publicClient = () => createPublicClient({ transport: custom(node.provider) })
const wallet = (account: Hex) => createWalletClient({ account, transport: custom(node.provider) })

const deploy = async (artifact: typeof stock, args: ReadonlyArray<unknown>, at?: number): Promise<Hex> => {
  if (at !== undefined) await node.setNextBlockTimestamp(at)
  const hash = await wallet(issuer).sendTransaction({
    chain: null,
    data: encodeDeployData({ abi: artifact.abi, bytecode: artifact.bytecode, args: args as never })
  })
  const receipt = await publicClient().getTransactionReceipt({ hash })
  return receipt.contractAddress!
}

const write = async (address: Hex, abi: typeof stock.abi, functionName: string, args: ReadonlyArray<unknown>, opts: {
  from?: Hex
  at?: number
} = {}) => {
  if (opts.at !== undefined) await node.setNextBlockTimestamp(opts.at)
  const hash = await wallet(opts.from ?? issuer).writeContract({
    chain: null,
    address,
    abi,
    functionName,
    args
  } as never)
  return publicClient().getTransactionReceipt({ hash })
}

const read = <T>(address: Hex, functionName: string, args: ReadonlyArray<unknown> = [], blockNumber?: bigint) =>
  publicClient().readContract({
    address,
    abi: stock.abi,
    functionName,
    args,
    ...(blockNumber === undefined ? {} : { blockNumber })
  } as never) as Promise<T>

beforeAll(async () => {
  node = await startTestNode({ genesisTimestamp: T0 })
  issuer = node.accounts[0]!.address
  holder = node.accounts[1]!.address
  other = node.accounts[2]!.address
})

afterAll(async () => {
  await node.close()
})

describe("Stock", () => {
  it("switches uiMultiplier exactly at effectiveAt, silently", async () => {
    const token = await deploy(stock, ["Apple • Robinhood Token", "AAPL", issuer], T0 + 100)
    await write(token, stock.abi, "mint", [holder, 10n * ONE], { at: T0 + 101 })
    expect(await read<bigint>(token, "effectiveAt")).toBe(0n)
    expect(await read<bigint>(token, "uiMultiplier")).toBe(ONE)

    const next = 1_000566080061092436n
    const announce = await write(token, stock.abi, "updateMultiplier", [next, BigInt(T0 + 700)], { at: T0 + 120 })
    expect(announce.logs).toHaveLength(1)
    expect(announce.logs[0]!.topics[0]).toBe(TOPIC_3)
    const decoded = decodeEventLog({ abi: stock.abi, ...announce.logs[0]! })
    expect(decoded.eventName).toBe("UIMultiplierUpdated")
    expect(decoded.args).toEqual({ oldMultiplier: ONE, newMultiplier: next, effectiveAtTimestamp: BigInt(T0 + 700) })

    await node.request("evm_mine", [T0 + 699])
    const before = await node.block("latest")
    await node.request("evm_mine", [T0 + 700])
    const atEffective = await node.block("latest")
    expect(before.timestamp).toBe(T0 + 699)

    const atBlock = (b: { number: number }) => BigInt(b.number)
    expect(await read<bigint>(token, "uiMultiplier", [], atBlock(before))).toBe(ONE)
    expect(await read<bigint>(token, "newUIMultiplier", [], atBlock(before))).toBe(next)
    expect(await read<bigint>(token, "effectiveAt", [], atBlock(before))).toBe(BigInt(T0 + 700))
    expect(await read<bigint>(token, "uiMultiplier", [], atBlock(atEffective))).toBe(next)
    expect(await read<bigint>(token, "balanceOfUI", [holder], atBlock(before))).toBe(10n * ONE)
    expect(await read<bigint>(token, "balanceOfUI", [holder], atBlock(atEffective))).toBe(10n * next)
    expect(await read<bigint>(token, "balanceOf", [holder], atBlock(atEffective))).toBe(10n * ONE)
    expect(await read<bigint>(token, "totalSupplyUI", [], atBlock(atEffective))).toBe(10n * next)
    expect(await read<bigint>(token, "effectiveAt", [], atBlock(atEffective))).toBe(BigInt(T0 + 700))

    const activation = await publicClient().getLogs({
      address: token,
      fromBlock: atBlock(atEffective),
      toBlock: atBlock(atEffective)
    })
    expect(activation).toHaveLength(0)

    const slot = (label: string, blockNumber: bigint) =>
      publicClient().getStorageAt({
        address: token,
        slot: toHex(storageSlot("Stock", label), { size: 32 }),
        blockNumber
      })
    expect(BigInt((await slot("_uiMultiplier", atBlock(atEffective)))!)).toBe(ONE)
    expect(BigInt((await slot("_newUIMultiplier", atBlock(atEffective)))!)).toBe(next)
    expect(BigInt((await slot("_effectiveAt", atBlock(atEffective)))!)).toBe(BigInt(T0 + 700))
  })

  it("a re-announcement while pending keeps the old multiplier; an immediate update applies at once", async () => {
    const token = await deploy(stock, ["CrowdStrike Holdings • Robinhood Token", "CRWD", issuer])
    const first = await write(token, stock.abi, "updateMultiplier", [4n * ONE, BigInt(T0 + 10_000)])
    const second = await write(token, stock.abi, "updateMultiplier", [4n * ONE, BigInt(T0 + 10_000)])
    for (const receipt of [first, second]) {
      expect(decodeEventLog({ abi: stock.abi, ...receipt.logs[0]! }).args).toEqual({
        oldMultiplier: ONE,
        newMultiplier: 4n * ONE,
        effectiveAtTimestamp: BigInt(T0 + 10_000)
      })
    }
    const immediate = await write(token, stock.abi, "updateMultiplier", [2n * ONE])
    const block = await node.block(Number(immediate.blockNumber))
    expect(decodeEventLog({ abi: stock.abi, ...immediate.logs[0]! }).args).toEqual({
      oldMultiplier: ONE,
      newMultiplier: 2n * ONE,
      effectiveAtTimestamp: BigInt(block.timestamp)
    })
    expect(await read<bigint>(token, "uiMultiplier", [], immediate.blockNumber)).toBe(2n * ONE)
  })

  it("emits Transfer and TransferWithScaledUI on mint, transfer and burn", async () => {
    const token = await deploy(stock, ["Tesla • Robinhood Token", "TSLA", issuer])
    await write(token, stock.abi, "updateMultiplier", [3n * ONE / 2n])
    const minted = await write(token, stock.abi, "mint", [holder, 4n * ONE])
    const moved = await write(token, stock.abi, "transfer", [other, ONE], { from: holder })
    const burnt = await write(token, stock.abi, "burn", [other, ONE])
    const zero = "0x0000000000000000000000000000000000000000"
    const events = [minted, moved, burnt].map((r) => r.logs.map((l) => decodeEventLog({ abi: stock.abi, ...l })))
    expect(events.map((e) => e.map((x) => x.eventName))).toEqual([
      ["Transfer", "TransferWithScaledUI"],
      ["Transfer", "TransferWithScaledUI"],
      ["Transfer", "TransferWithScaledUI"]
    ])
    expect(events[0]![1]!.args).toEqual({ from: zero, to: holder, value: 4n * ONE, uiValue: 6n * ONE })
    expect(events[1]![0]!.args).toEqual({ from: holder, to: other, value: ONE })
    expect(events[2]![1]!.args).toEqual({ from: other, to: zero, value: ONE, uiValue: 3n * ONE / 2n })
    expect(await read<bigint>(token, "totalSupply")).toBe(3n * ONE)
  })

  it("pauses: argument-less events, transfers blocked while paused, oracle pause advisory", async () => {
    const token = await deploy(stock, ["Ford Motor • Robinhood Token", "F", issuer])
    await write(token, stock.abi, "mint", [holder, ONE])
    const topics = async (fn: string) => (await write(token, stock.abi, fn, [])).logs.map((l) => l.topics)
    const paused = await topics("pause")
    expect(paused).toEqual([[keccak256(toHex("Paused()"))]])
    expect(await read<boolean>(token, "paused")).toBe(true)
    expect(await read<boolean>(token, "tokenPaused")).toBe(true)
    await expect(write(token, stock.abi, "transfer", [other, 1n], { from: holder })).rejects.toThrow(
      /TokenIsPaused|revert/i
    )
    expect(await topics("unpause")).toEqual([[keccak256(toHex("Unpaused()"))]])
    expect(await topics("pauseOracle")).toEqual([[keccak256(toHex("OraclePaused()"))]])
    expect(await read<boolean>(token, "oraclePaused")).toBe(true)
    await write(token, stock.abi, "transfer", [other, 1n], { from: holder })
    expect(await topics("unpauseOracle")).toEqual([[keccak256(toHex("OracleUnpaused()"))]])
    await write(token, stock.abi, "setGlobalPause", [true])
    expect(await read<boolean>(token, "paused")).toBe(true)
    expect(await read<boolean>(token, "tokenPaused")).toBe(false)
    await expect(write(token, stock.abi, "mint", [holder, 1n], { from: holder })).rejects.toThrow(/NotOwner|revert/i)
  })

  it("supports ERC-165 and the three ERC-8056 interface ids, nothing else", async () => {
    const token = await deploy(stock, ["X", "X", issuer])
    for (const id of ["0x01ffc9a7", "0xa60bf13d", "0x4bd27648", "0xd890fd71"]) {
      expect(await read<boolean>(token, "supportsInterface", [id])).toBe(true)
    }
    expect(await read<boolean>(token, "supportsInterface", ["0xffffffff"])).toBe(false)
    expect(await read<number>(token, "decimals")).toBe(18)
  })

  it("LegacyStock emits the older 4-argument event", async () => {
    const token = await deploy(legacy, ["Legacy", "LEG", issuer])
    const receipt = await write(token, legacy.abi, "updateMultiplier", [2n * ONE, BigInt(T0 + 50_000)])
    const block = await node.block(Number(receipt.blockNumber))
    expect(receipt.logs[0]!.topics).toEqual([TOPIC_4])
    expect(receipt.logs[0]!.data).toBe(
      ("0x" +
        [ONE, 2n * ONE, BigInt(block.timestamp), BigInt(T0 + 50_000)].map((n) => pad(toHex(n)).slice(2)).join(
          ""
        )) as Hex
    )
  })
})

describe("PriceFeed", () => {
  it("answers like a Chainlink AggregatorV3, reverting for unknown rounds", async () => {
    const feed = await deploy(feedArtifact, ["Robinhood AAPL / USD", 1, issuer])
    const call = (functionName: string, args: ReadonlyArray<unknown> = []) =>
      publicClient().readContract({ address: feed, abi: feedArtifact.abi, functionName, args } as never)
    expect(await call("decimals")).toBe(8)
    expect(await call("description")).toBe("Robinhood AAPL / USD")
    expect(await call("version")).toBe(6n)
    await expect(call("latestRoundData")).rejects.toThrow(/No data present/)

    const first = await write(feed, feedArtifact.abi, "postRound", [22_944_000_000n, 0n])
    const t1 = (await node.block(Number(first.blockNumber))).timestamp
    await write(feed, feedArtifact.abi, "postRound", [22_941_000_000n, BigInt(t1 - 5)])
    const phase = 1n << 64n
    expect(await call("latestRoundData")).toEqual([
      phase + 2n,
      22_941_000_000n,
      BigInt(t1 - 5),
      BigInt(t1 - 5),
      phase + 2n
    ])
    expect(await call("getRoundData", [phase + 1n])).toEqual([
      phase + 1n,
      22_944_000_000n,
      BigInt(t1),
      BigInt(t1),
      phase + 1n
    ])
    await expect(call("getRoundData", [phase + 3n])).rejects.toThrow(/No data present/)
    await expect(call("getRoundData", [1n])).rejects.toThrow(/No data present/)
    await expect(call("getRoundData", [(2n << 64n) + 1n])).rejects.toThrow(/No data present/)
    await expect(write(feed, feedArtifact.abi, "postRound", [1n, 0n], { from: holder })).rejects.toThrow(
      /NotOwner|revert/i
    )
  })
})
