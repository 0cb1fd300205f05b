import { encodeDeployData, encodeFunctionData, type Hex } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import WebSocket from "ws"
import { loadArtifact } from "./artifacts.js"
import { startTestNode, type TestNode } from "./node.js"

let node: TestNode

beforeAll(async () => {
  node = await startTestNode({ chainId: 4663, genesisTimestamp: 1_800_000_000 })
})

afterAll(async () => {
  await node.close()
})

const post = async (body: unknown) => {
  const response = await fetch(node.httpUrl, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body)
  })
  return { status: response.status, body: (await response.json()) as unknown }
}

const openSocket = async (): Promise<{ socket: WebSocket; messages: Array<any> }> => {
  const socket = new WebSocket(node.wsUrl)
  const messages: Array<any> = []
  socket.on("message", (m) => messages.push(JSON.parse(String(m))))
  await new Promise((resolve, reject) => {
    socket.once("open", resolve)
    socket.once("error", reject)
  })
  return { socket, messages }
}

const until = async (check: () => boolean, ms = 2_000) => {
  const end = Date.now() + ms
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 10))
  }
}

describe("test node over HTTP", () => {
  it("fills missing params and answers with jsonrpc and the request id, batches included", async () => {
    expect(await post({ jsonrpc: "2.0", id: "a-1", method: "eth_chainId" })).toEqual({
      status: 200,
      body: { jsonrpc: "2.0", id: "a-1", result: "0x1237" }
    })
    const batch = await post([
      { jsonrpc: "2.0", id: 1, method: "eth_blockNumber" },
      { jsonrpc: "2.0", id: 2, method: "net_version", params: [] },
      { jsonrpc: "2.0", id: 3, method: "no_such_method", params: [] }
    ])
    const answers = batch.body as Array<{ id: number; result?: unknown; error?: { code: number } }>
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3])
    expect(answers[1]!.result).toBe("4663")
    expect(answers[2]!.error).toBeDefined()
    expect(await post("{not json")).toMatchObject({ body: { error: { code: -32700 } } })
  })

  it("prefunds the dev accounts", async () => {
    const balance = await node.request<string>("eth_getBalance", [node.accounts[9]!.address, "latest"])
    expect(BigInt(balance)).toBe(10_000n * 10n ** 18n)
  })
})

describe("test node over WebSocket", () => {
  it("delivers newHeads and logs subscriptions, and stops after eth_unsubscribe", async () => {
    const { socket, messages } = await openSocket()
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }))
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "eth_subscribe", params: ["logs", {}] }))
    await until(() => messages.filter((m) => m.id !== undefined).length === 2)
    const headsId = messages.find((m) => m.id === 1).result as string
    const logsId = messages.find((m) => m.id === 2).result as string

    const start = await node.blockNumber()
    await node.mine(2)
    const stock = loadArtifact("Stock")
    const from = node.accounts[0]!.address
    const deployHash = await node.request<Hex>("eth_sendTransaction", [
      { from, data: encodeDeployData({ abi: stock.abi, bytecode: stock.bytecode, args: ["T", "T", from] }) }
    ])
    const receipt = await node.request<{ contractAddress: Hex }>("eth_getTransactionReceipt", [deployHash])
    await node.request("eth_sendTransaction", [
      {
        from,
        to: receipt.contractAddress,
        data: encodeFunctionData({ abi: stock.abi, functionName: "mint", args: [from, 5n] })
      }
    ])
    const heads = () =>
      messages.filter((m) => m.params?.subscription === headsId).map((m) => Number(m.params.result.number))
    await until(() => heads().length === 4)
    expect(heads()).toEqual([start + 1, start + 2, start + 3, start + 4])
    const logs = () => messages.filter((m) => m.params?.subscription === logsId)
    await until(() => logs().length === 3)
    expect(logs().map((m) => m.params.result.address)).toEqual(Array(3).fill(receipt.contractAddress.toLowerCase()))
    expect(logs().map((m) => Number(m.params.result.blockNumber))).toEqual([start + 3, start + 4, start + 4])

    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "eth_unsubscribe", params: [headsId] }))
    await until(() => messages.some((m) => m.id === 3))
    await node.mine(1)
    await new Promise((r) => setTimeout(r, 50))
    expect(heads()).toHaveLength(4)
    socket.close()
    await until(() => node.webSocketClients() === 0)
  })
})

describe("re-org", () => {
  it("replaces the blocks after the snapshot: same height, new hashes, old transactions gone", async () => {
    await node.mine(1)
    const fork = await node.snapshot()
    const from = node.accounts[1]!.address
    const to = node.accounts[2]!.address
    const dropped = await node.request<Hex>("eth_sendTransaction", [{ from, to, value: "0x1" }])
    await node.mine(2)
    const { socket, messages } = await openSocket()
    socket.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "eth_subscribe", params: ["newHeads"] }))
    await until(() => messages.length === 1)

    const result = await node.reorg(fork)
    expect(result.forkBlock).toBe(fork.blockNumber)
    expect(result.dropped).toHaveLength(3)
    expect(result.newHead.number).toBe(result.oldHead.number)
    expect(result.newHead.hash).not.toBe(result.oldHead.hash)
    expect(await node.request("eth_getTransactionReceipt", [dropped])).toBeNull()
    const ancestor = await node.block(fork.blockNumber)
    const firstNew = await node.block(fork.blockNumber + 1)
    expect(firstNew.timestamp).toBe(result.dropped[0]!.timestamp + 1)
    expect(
      (await node.request<{ parentHash: string }>("eth_getBlockByNumber", [`0x${firstNew.number.toString(16)}`, false]))
        .parentHash
    )
      .toBe(ancestor.hash)
    await until(() => messages.length === 4)
    expect(messages.slice(1).map((m) => Number(m.params.result.number))).toEqual([
      fork.blockNumber + 1,
      fork.blockNumber + 2,
      fork.blockNumber + 3
    ])
    socket.close()
  })

  it("can build a longer branch with other transactions", async () => {
    const fork = await node.snapshot()
    const from = node.accounts[3]!.address
    await node.request("eth_sendTransaction", [{ from, to: node.accounts[4]!.address, value: "0x1" }])
    let replayed: Hex | undefined
    const result = await node.reorg(fork, {
      blocks: 3,
      replay: async (n) => {
        replayed = await n.request<Hex>("eth_sendTransaction", [{ from, to: node.accounts[5]!.address, value: "0x2" }])
      }
    })
    expect(result.dropped).toHaveLength(1)
    expect(result.newHead.number).toBe(fork.blockNumber + 3)
    const receipt = await node.request<{ blockNumber: Hex }>("eth_getTransactionReceipt", [replayed])
    expect(Number(receipt.blockNumber)).toBe(fork.blockNumber + 1)
    await expect(node.revert(fork)).resolves.toBe(false)
  })
})
