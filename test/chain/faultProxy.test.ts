import { encodeDeployData, encodeFunctionData, type Hex } from "viem"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { loadArtifact } from "./artifacts.js"
import { type FaultProxy, type Faults, startFaultProxy } from "./faultProxy.js"
import { startTestNode, type TestNode } from "./node.js"

let node: TestNode
let proxy: FaultProxy
let token: Hex

const stock = loadArtifact("Stock")

beforeAll(async () => {
  node = await startTestNode()
  const from = node.accounts[0]!.address
  const hash = await node.request<Hex>("eth_sendTransaction", [
    { from, data: encodeDeployData({ abi: stock.abi, bytecode: stock.bytecode, args: ["T", "T", from] }) }
  ])
  token = (await node.request<{ contractAddress: Hex }>("eth_getTransactionReceipt", [hash])).contractAddress
  for (let i = 0; i < 12; i++) {
    await node.request("eth_sendTransaction", [
      { from, to: token, data: encodeFunctionData({ abi: stock.abi, functionName: "mint", args: [from, 1n] }) }
    ])
  }
  await node.mine(1_500)
  proxy = await startFaultProxy({ target: node.httpUrl, seed: 42 })
})

afterEach(() => {
  proxy.setFaults({})
  proxy.resetCounts()
})

afterAll(async () => {
  await proxy.close()
  await node.close()
})

const rpc = async (body: unknown, url = proxy.url, signal?: AbortSignal) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal })
  })
  const text = await response.text()
  let json: any
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

const call = (method: string, params: ReadonlyArray<unknown> = [], id: unknown = 1) =>
  rpc({ jsonrpc: "2.0", id, method, params })

const getLogs = (fromBlock: number, toBlock: number) =>
  call("eth_getLogs", [{
    address: token,
    fromBlock: `0x${fromBlock.toString(16)}`,
    toBlock: `0x${toBlock.toString(16)}`
  }])

describe("fault proxy", () => {
  it("passes requests through and counts them per method, batch elements one by one", async () => {
    expect((await call("eth_chainId", [], "x")).json).toEqual({ jsonrpc: "2.0", id: "x", result: "0x7a69" })
    const batch = await rpc([
      { jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] },
      { jsonrpc: "2.0", id: 2, method: "eth_chainId", params: [] }
    ])
    expect(batch.json.map((r: { id: number }) => r.id)).toEqual([1, 2])
    expect(proxy.counts()).toEqual({ eth_chainId: 2, eth_blockNumber: 1 })
    expect(proxy.total()).toBe(3)
  })

  it("rate limits with HTTP 429 and Retry-After, at random or above a request rate", async () => {
    proxy.setFaults({ rateLimitRate: 1, retryAfterSeconds: 2 })
    const limited = await call("eth_blockNumber", [], 7)
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("2")
    expect(limited.json.error.code).toBe(429)
    expect(limited.json.id).toBe(7)

    proxy.setFaults({ rateLimitPerSecond: 3 })
    const statuses: Array<number> = []
    for (let i = 0; i < 5; i++) statuses.push((await call("eth_blockNumber")).status)
    expect(statuses).toEqual([200, 200, 200, 429, 429])
    expect(proxy.faultCounts().rate_limited).toBe(3)
  })

  it("answers 5xx at the given rate, deterministically for a seed", async () => {
    proxy.setFaults({ serverErrorRate: 1 })
    const failed = await call("eth_blockNumber")
    expect([500, 502, 503]).toContain(failed.status)

    const run = async () => {
      const p = await startFaultProxy({ target: node.httpUrl, seed: 7, faults: { serverErrorRate: 0.3 } })
      const statuses: Array<number> = []
      for (let i = 0; i < 30; i++) {
        statuses.push((await rpc({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }, p.url)).status)
      }
      await p.close()
      return statuses
    }
    const first = await run()
    expect(await run()).toEqual(first)
    const errors = first.filter((s) => s >= 500).length
    expect(errors).toBeGreaterThan(3)
    expect(errors).toBeLessThan(20)
  })

  it("hangs requests without answering (time-outs), and resets connections when down", async () => {
    proxy.setFaults({ timeoutRate: 1 })
    await expect(
      rpc({ jsonrpc: "2.0", id: 1, method: "eth_blockNumber", params: [] }, proxy.url, AbortSignal.timeout(200))
    ).rejects.toThrow(/abort|timeout/i)

    proxy.setFaults({ down: true })
    await expect(call("eth_blockNumber")).rejects.toThrow(/fetch failed/)
    expect(proxy.faultCounts().reset).toBe(1)
  })

  it("applies random faults only to the chosen methods", async () => {
    proxy.setFaults({ serverErrorRate: 1, randomFaultMethods: ["eth_getLogs"] })
    expect((await call("eth_blockNumber")).status).toBe(200)
    expect((await getLogs(0, 10)).status).toBeGreaterThanOrEqual(500)
  })

  it.each<[NonNullable<Faults["getLogsRangeStyle"]>, number, number, RegExp]>([
    ["arbitrum", 200, -32600, /^eth_getLogs is limited to a 1000 block range$/],
    ["alchemy", 200, -32602, /^Log response size exceeded\. .*up to a 1K block range.*should work: \[0x0, 0x3e7\]$/],
    ["quicknode", 413, -32614, /^eth_getLogs is limited to a 1,000 range$/],
    ["infura", 200, -32602, /^range 1001 exceeds limit of 1000$/],
    ["ankr", 200, -32600, /^block range is too wide$/]
  ])("caps eth_getLogs block ranges in %s's words", async (style, status, code, message) => {
    proxy.setFaults({ getLogsMaxRange: 1000, getLogsRangeStyle: style })
    const refused = await getLogs(0, 1000)
    expect(refused.status).toBe(status)
    expect(refused.json.error.code).toBe(code)
    expect(refused.json.error.message).toMatch(message)
    const accepted = await getLogs(0, 999)
    expect(accepted.json.result.length).toBeGreaterThan(0)
    expect(proxy.faultCounts().range_cap).toBe(1)
  })

  it("caps the number of logs returned", async () => {
    proxy.setFaults({ getLogsMaxResults: 10 })
    const refused = await getLogs(0, 20)
    expect(refused.json.error).toEqual({ code: -32005, message: "query returned more than 10 results" })
    expect((await getLogs(0, 4)).json.result.length).toBeLessThanOrEqual(10)
    proxy.setFaults({ getLogsMaxResults: 10, getLogsResultStyle: "arbitrum" })
    expect((await getLogs(0, 20)).json.error.message).toBe("logs matched by query exceeds limit of 10")
  })

  it("fails state reads older than N blocks like a pruned node, whatever the block parameter's form", async () => {
    const head = await node.blockNumber()
    const data = encodeFunctionData({ abi: stock.abi, functionName: "totalSupply" })
    const old = `0x${(head - 200).toString(16)}`
    const recent = `0x${(head - 50).toString(16)}`
    for (const style of ["missing-trie-node", "header-not-found", "metadata-not-found"] as const) {
      proxy.setFaults({ prunedAfterBlocks: 100, prunedStyle: style })
      const failed = await call("eth_call", [{ to: token, data }, old])
      expect(failed.json.error.code).toBe(-32000)
      expect(failed.json.error.message).toMatch(
        {
          "missing-trie-node": /^missing trie node [0-9a-f]{64} \(path \)/,
          "header-not-found": /^header not found$/,
          "metadata-not-found": /^metadata is not found$/
        }[style]
      )
    }
    expect((await call("eth_call", [{ to: token, data }, recent])).json.result).toMatch(/^0x/)
    expect((await call("eth_call", [{ to: token, data }, "latest"])).json.result).toMatch(/^0x/)
    expect((await call("eth_getBalance", [node.accounts[0]!.address, old])).json.error).toBeDefined()
    expect((await call("eth_getStorageAt", [token, "0x0", old])).json.error).toBeDefined()
    expect((await call("eth_getStorageAt", [token, "0x0", recent])).json.result).toMatch(/^0x/)
    const oldBlock = await node.block(head - 200)
    expect((await call("eth_call", [{ to: token, data }, { blockHash: oldBlock.hash }])).json.error).toBeDefined()
    expect((await call("eth_call", [{ to: token, data }, { blockNumber: recent }])).json.result).toMatch(/^0x/)
    expect((await call("eth_getBlockByNumber", [old, false])).json.result.number).toBe(old)
    expect(proxy.log().filter((e) => e.fault === "pruned").map((e) => e.method)).toEqual([
      "eth_call",
      "eth_call",
      "eth_call",
      "eth_getBalance",
      "eth_getStorageAt",
      "eth_call"
    ])
  })
})
