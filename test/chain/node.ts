/**
 * A local EVM node for tests and the offline demo: Hardhat's EDR in process, served over HTTP and WebSocket on a
 * loopback port.
 *
 * EDR quirks handled here: it rejects requests without `params` (filled with `[]`) and answers without `jsonrpc`
 * and `id` (filled in, or viem's WebSocket matching breaks). `eth_subscribe` (newHeads, logs) works over the
 * WebSocket; notifications are routed to the socket that subscribed.
 *
 * Re-orgs: EDR has no "rewind to block N", so a re-org starts from a snapshot taken at the fork point:
 *
 *   const fork = await node.snapshot()          // head at this moment is the common ancestor
 *   ... send transactions / mine: the branch that will be dropped ...
 *   const r = await node.reorg(fork)             // same height, every block after the fork has a new hash
 *   const r = await node.reorg(fork, { blocks: 5 })                       // a longer (or shorter) new branch
 *   const r = await node.reorg(fork, { replay: async (n) => { ...send other txs... } })  // different contents
 *
 * `reorg` reverts to the snapshot (dropping the old branch's transactions), mines the new branch with timestamps
 * one second later than the old blocks at the same height (so no hash can repeat), and returns both heads. A
 * snapshot is used up by `reorg`/`revert`; take a new one for the next re-org.
 */
import * as edr from "@nomicfoundation/edr"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { pathToFileURL } from "node:url"
import { type WebSocket, WebSocketServer } from "ws"

export interface DevAccount {
  readonly address: `0x${string}`
  readonly privateKey: `0x${string}`
}

/** The well-known Hardhat/Anvil development accounts ("test test ... junk"), prefunded on every test node. */
export const DEV_ACCOUNTS: ReadonlyArray<DevAccount> = [
  ["0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266", "0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80"],
  ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8", "0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d"],
  ["0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC", "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a"],
  ["0x90F79bf6EB2c4f870365E785982E1f101E93b906", "0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6"],
  ["0x15d34AAf54267DB7D7c367839AAf71A00a2C6A65", "0x47e179ec197488593b187f80a00eb0da91f1b9d0b13f8733639f19c30a34926a"],
  ["0x9965507D1a55bcC2695C58ba16FB37d819B0A4dc", "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"],
  ["0x976EA74026E726554dB657fA54763abd0C3a0aa9", "0x92db14e403b83dfe3df233f83dfa3a0d7096f21ca9b0d6d6b8d88b2b4ec1564e"],
  ["0x14dC79964da2C08b23698B3D3cc7Ca32193d9955", "0x4bbbf85ce3377467afe5d46f804f221813b2bb87f24d81f60f1fcdbf7cbf4356"],
  ["0x23618e81E3f5cdF7f54C3d65f7FBc0aBf5B21E8f", "0xdbda1821b80551c9d65939329250298aa3472ba22feea921c0cf5d620ea67b97"],
  ["0xa0Ee7A142d267C1f36714E4a8F75612F20a79720", "0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6"]
].map(([address, privateKey]) => ({ address, privateKey }) as DevAccount)

export interface TestNodeOptions {
  /** Default 31337. */
  readonly chainId?: number
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 0: a free port. */
  readonly port?: number
  /** Unix seconds of the genesis block; default now. Blocks can never be given an earlier timestamp. */
  readonly genesisTimestamp?: number
  /** Wei given to each dev account; default 10,000 ETH. */
  readonly accountBalance?: bigint
  /** Default true: every transaction is mined in its own block at once. */
  readonly autoMine?: boolean
  /**
   * Default false. True: `eth_getLogs` answers carry each log's `blockTimestamp`, as geth 1.16+ and Reth give it
   * (EDR does not); the node keeps the times of the blocks it mines, as a real node has them at hand.
   */
  readonly logTimestamps?: boolean
  /** Default false (EDR does not offer it). True: `eth_getBlockReceipts` is served: every receipt of a block. */
  readonly blockReceipts?: boolean
}

export interface BlockRef {
  readonly number: number
  readonly hash: `0x${string}`
  readonly timestamp: number
}

export interface Snapshot {
  readonly id: string
  /** The head when the snapshot was taken: the common ancestor of a later re-org. */
  readonly blockNumber: number
}

export interface ReorgOptions {
  /** Length of the new branch; default the old branch's, so the head number stays the same. */
  readonly blocks?: number
  /** Builds the new branch instead of empty blocks (send other transactions); then mined up to `blocks`. */
  readonly replay?: (node: TestNode) => Promise<void>
}

export interface ReorgResult {
  /** The common ancestor: the last block both branches share. */
  readonly forkBlock: number
  readonly oldHead: BlockRef
  readonly newHead: BlockRef
  /** The old branch's blocks, now gone. */
  readonly dropped: ReadonlyArray<BlockRef>
}

/** The minimal EIP-1193 shape viem's `custom()` transport accepts. */
export interface Eip1193 {
  request(args: { readonly method: string; readonly params?: unknown }): Promise<unknown>
}

export interface TestNode {
  readonly httpUrl: string
  readonly wsUrl: string
  readonly chainId: number
  readonly accounts: ReadonlyArray<DevAccount>
  /** In-process access (no HTTP), e.g. `createWalletClient({ transport: custom(node.provider) })`. */
  readonly provider: Eip1193
  /** Sends a JSON-RPC request in process; throws `RpcResponseError` on a JSON-RPC error. */
  request<T = unknown>(method: string, params?: ReadonlyArray<unknown>): Promise<T>
  blockNumber(): Promise<number>
  block(number: number | "latest"): Promise<BlockRef>
  /** Mines `blocks` empty blocks (default 1), `intervalSeconds` apart (default 1). */
  mine(blocks?: number, intervalSeconds?: number): Promise<void>
  setNextBlockTimestamp(timestamp: number | bigint): Promise<void>
  snapshot(): Promise<Snapshot>
  revert(snapshot: Snapshot | string): Promise<boolean>
  reorg(from: Snapshot, options?: ReorgOptions): Promise<ReorgResult>
  /** Open WebSocket connections (to check that clients close theirs). */
  readonly webSocketClients: () => number
  /** Turns `blockTimestamp` in `eth_getLogs` answers on or off (see `TestNodeOptions.logTimestamps`). */
  setLogTimestamps(on: boolean): void
  close(): Promise<void>
}

export class RpcResponseError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown
  ) {
    super(`${method}: ${message} (${code})`)
    this.name = "RpcResponseError"
  }
}

interface JsonRpcRequest {
  readonly jsonrpc?: string
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: unknown
}

interface JsonRpcResponse {
  readonly jsonrpc: "2.0"
  readonly id: unknown
  readonly result?: unknown
  readonly error?: { readonly code: number; readonly message: string; readonly data?: unknown }
}

let sharedContext: Promise<edr.EdrContext> | undefined

/** EDR allows one context per process. */
const edrContext = (): Promise<edr.EdrContext> => {
  if (sharedContext === undefined) {
    sharedContext = (async () => {
      const context = new edr.EdrContext()
      await context.registerProviderFactory(edr.L1_CHAIN_TYPE, edr.l1ProviderFactory())
      return context
    })()
  }
  return sharedContext
}

const hexToBytes = (hex: string): Uint8Array => Uint8Array.from(Buffer.from(hex.replace(/^0x/, ""), "hex"))
const toHex = (n: number | bigint): string => `0x${BigInt(n).toString(16)}`

export const startTestNode = async (options: TestNodeOptions = {}): Promise<TestNode> => {
  const chainId = options.chainId ?? 31337
  const balance = options.accountBalance ?? 10_000n * 10n ** 18n
  const subscribers = new Map<bigint, { socket: WebSocket; id: string; kind: string }>()
  let logTimestamps = options.logTimestamps ?? false
  /** Block hash → hex timestamp of every block mined, from the node's own newHeads feed. */
  const blockTimes = new Map<string, string>()
  const internal = { headsFilter: -1n }

  const context = await edrContext()
  const provider = await context.createProvider(
    edr.L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: false,
      allowUnlimitedContractSize: false,
      bailOnCallFailure: true,
      bailOnTransactionFailure: true,
      chainId: BigInt(chainId),
      coinbase: hexToBytes("0xc014ba5ec014ba5ec014ba5ec014ba5ec014ba5e"),
      defaultTransactionGasLimit: 30_000_000n,
      genesisState: DEV_ACCOUNTS.map((a) => ({ address: hexToBytes(a.address), balance })),
      hardfork: edr.PRAGUE,
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: options.autoMine ?? true, memPool: { order: edr.MineOrdering.Priority } },
      network: {
        genesisBlockGasLimit: 60_000_000n,
        ...(options.genesisTimestamp === undefined ? {} : { genesisBlockTime: BigInt(options.genesisTimestamp) })
      },
      networkId: BigInt(chainId),
      observability: {},
      ownedAccounts: DEV_ACCOUNTS.map((a) => a.privateKey),
      precompileOverrides: []
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => {} },
    {
      subscriptionCallback: (event) => {
        if (event.filterId === internal.headsFilter) {
          const head = event.result as { hash?: string; timestamp?: string }
          if (head.hash !== undefined && head.timestamp !== undefined) blockTimes.set(head.hash, head.timestamp)
          return
        }
        const target = subscribers.get(event.filterId)
        if (target === undefined || target.socket.readyState !== target.socket.OPEN) return
        // EDR batches a block's logs into one array (empty ones too); nodes send one notification per log.
        const results: ReadonlyArray<unknown> = target.kind === "logs"
          ? (Array.isArray(event.result) ? event.result : [event.result])
          : [event.result]
        for (const result of results) {
          target.socket.send(JSON.stringify({
            jsonrpc: "2.0",
            method: "eth_subscription",
            params: { subscription: target.id, result }
          }))
        }
      }
    },
    new edr.ContractDecoder()
  )

  const forward = async (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    const id = request.id ?? null
    if (typeof request.method !== "string") {
      return { jsonrpc: "2.0", id, error: { code: -32600, message: "Invalid request: no method" } }
    }
    if (request.method === "eth_getBlockReceipts" && options.blockReceipts === true) {
      return { jsonrpc: "2.0", id, ...(await blockReceipts(request.params)) }
    }
    if (request.method === "eth_getLogs" && logTimestamps) {
      const answer = await forwardRaw(request)
      if (answer.error !== undefined || !Array.isArray(answer.result)) return answer
      const logs = answer.result as Array<{ blockHash: string }>
      return {
        ...answer,
        result: await Promise.all(logs.map(async (log) => ({ ...log, blockTimestamp: await timeOf(log.blockHash) })))
      }
    }
    return forwardRaw(request)
  }

  const timeOf = async (blockHash: string): Promise<string> => {
    const known = blockTimes.get(blockHash)
    if (known !== undefined) return known
    const block = await request<{ timestamp: string }>("eth_getBlockByHash", [blockHash, false])
    blockTimes.set(blockHash, block.timestamp)
    return block.timestamp
  }

  const blockReceipts = async (params: unknown): Promise<Pick<JsonRpcResponse, "result" | "error">> => {
    const tag = Array.isArray(params) ? params[0] : undefined
    const byHash = typeof tag === "string" && tag.length === 66
    const block = await forwardRaw({
      method: byHash ? "eth_getBlockByHash" : "eth_getBlockByNumber",
      params: [tag, false]
    })
    if (block.error !== undefined) return { error: block.error }
    if (block.result === null) return { result: null }
    const hashes = (block.result as { transactions: Array<string> }).transactions
    return { result: await Promise.all(hashes.map((hash) => request("eth_getTransactionReceipt", [hash]))) }
  }

  const forwardRaw = async (request: JsonRpcRequest): Promise<JsonRpcResponse> => {
    const id = request.id ?? null
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: request.method, params: request.params ?? [] })
    const response = await provider.handleRequest(body)
    const data = (typeof response.data === "string" ? JSON.parse(response.data) : response.data) as {
      result?: unknown
      error?: { code: number; message: string; data?: unknown }
    }
    return data.error !== undefined
      ? { jsonrpc: "2.0", id, error: data.error }
      : { jsonrpc: "2.0", id, result: data.result ?? null }
  }

  const request = async <T = unknown>(method: string, params: ReadonlyArray<unknown> = []): Promise<T> => {
    const response = await forward({ method, params })
    if (response.error !== undefined) {
      throw new RpcResponseError(method, response.error.code, response.error.message, response.error.data)
    }
    return response.result as T
  }

  internal.headsFilter = BigInt(await request<string>("eth_subscribe", ["newHeads"]))

  const handleWsMessage = async (socket: WebSocket, single: JsonRpcRequest): Promise<JsonRpcResponse> => {
    const response = await forward(single)
    if (single.method === "eth_subscribe" && typeof response.result === "string") {
      const kind = Array.isArray(single.params) ? String(single.params[0]) : ""
      subscribers.set(BigInt(response.result), { socket, id: response.result, kind })
    } else if (single.method === "eth_unsubscribe" && Array.isArray(single.params)) {
      const id = single.params[0]
      if (typeof id === "string") subscribers.delete(BigInt(id))
    }
    return response
  }

  const parseBody = (text: string): JsonRpcRequest | ReadonlyArray<JsonRpcRequest> | undefined => {
    try {
      return JSON.parse(text) as JsonRpcRequest | ReadonlyArray<JsonRpcRequest>
    } catch {
      return undefined
    }
  }

  const parseError: JsonRpcResponse = { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end()
      return
    }
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const parsed = parseBody(Buffer.concat(chunks).toString("utf8"))
      const answer: Promise<unknown> = parsed === undefined
        ? Promise.resolve(parseError)
        : Array.isArray(parsed)
        ? Promise.all(parsed.map((r: JsonRpcRequest) => forward(r)))
        : forward(parsed as JsonRpcRequest)
      answer.then(
        (body) => {
          if (!res.destroyed) res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
        },
        (error: unknown) => {
          if (!res.destroyed) {
            res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({
              jsonrpc: "2.0",
              id: null,
              error: { code: -32603, message: String(error) }
            }))
          }
        }
      )
    })
  })

  const sockets = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })

  const wss = new WebSocketServer({ server })
  wss.on("connection", (socket: WebSocket) => {
    socket.on("message", (raw) => {
      const parsed = parseBody(String(raw))
      const answer: Promise<unknown> = parsed === undefined
        ? Promise.resolve(parseError)
        : Array.isArray(parsed)
        ? Promise.all(parsed.map((r: JsonRpcRequest) => handleWsMessage(socket, r)))
        : handleWsMessage(socket, parsed as JsonRpcRequest)
      void answer.then((body) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(body))
      })
    })
    socket.on("close", () => {
      for (const [filterId, target] of subscribers) {
        if (target.socket === socket) {
          subscribers.delete(filterId)
          void forward({ method: "eth_unsubscribe", params: [target.id] })
        }
      }
    })
  })

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const address = server.address() as AddressInfo
  const hostPort = `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`

  const block = async (number: number | "latest"): Promise<BlockRef> => {
    const b = await request<{ number: string; hash: `0x${string}`; timestamp: string } | null>(
      "eth_getBlockByNumber",
      [number === "latest" ? "latest" : toHex(number), false]
    )
    if (b === null) throw new Error(`block ${number} not found`)
    return { number: Number(b.number), hash: b.hash, timestamp: Number(b.timestamp) }
  }

  const blockNumber = async (): Promise<number> => Number(await request<string>("eth_blockNumber"))

  let closed = false

  const node: TestNode = {
    httpUrl: `http://${hostPort}`,
    wsUrl: `ws://${hostPort}`,
    chainId,
    accounts: DEV_ACCOUNTS,
    provider: {
      request: async ({ method, params }) => request(method, (params ?? []) as ReadonlyArray<unknown>)
    },
    request,
    blockNumber,
    block,
    mine: async (blocks = 1, intervalSeconds = 1) => {
      await request("hardhat_mine", [toHex(blocks), toHex(intervalSeconds)])
    },
    setNextBlockTimestamp: async (timestamp) => {
      await request("evm_setNextBlockTimestamp", [toHex(timestamp)])
    },
    snapshot: async () => {
      const blockNumberNow = await blockNumber()
      const id = await request<string>("evm_snapshot")
      return { id, blockNumber: blockNumberNow }
    },
    revert: async (snapshot) => request<boolean>("evm_revert", [typeof snapshot === "string" ? snapshot : snapshot.id]),
    reorg: async (from, reorgOptions = {}) => {
      const oldHead = await block("latest")
      const dropped: Array<BlockRef> = []
      for (let n = from.blockNumber + 1; n <= oldHead.number; n++) dropped.push(await block(n))
      const reverted = await request<boolean>("evm_revert", [from.id])
      if (!reverted) throw new Error(`snapshot ${from.id} could not be reverted (already used?)`)
      const length = reorgOptions.blocks ?? dropped.length
      const ancestor = await block(from.blockNumber)
      const nextTimestamp = (height: number, previous: number): number => {
        const old = dropped[height - from.blockNumber - 1]
        return Math.max(previous + 1, old === undefined ? 0 : old.timestamp + 1)
      }
      if (reorgOptions.replay !== undefined) {
        await node.setNextBlockTimestamp(nextTimestamp(from.blockNumber + 1, ancestor.timestamp))
        await reorgOptions.replay(node)
      }
      let head = await block("latest")
      while (head.number < from.blockNumber + length) {
        await request("evm_mine", [nextTimestamp(head.number + 1, head.timestamp)])
        head = await block("latest")
      }
      for (const old of dropped) {
        if (old.number > head.number) break
        const now = await block(old.number)
        if (now.hash === old.hash) throw new Error(`re-org left block ${old.number} unchanged`)
      }
      return { forkBlock: from.blockNumber, oldHead, newHead: head, dropped }
    },
    webSocketClients: () => wss.clients.size,
    setLogTimestamps: (on) => {
      logTimestamps = on
    },
    close: async () => {
      if (closed) return
      closed = true
      subscribers.clear()
      for (const client of wss.clients) client.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  return node
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.argv[2] ?? 8545)
  const node = await startTestNode({ port })
  console.log(`EDR node (chain ${node.chainId}) at ${node.httpUrl} and ${node.wsUrl}`)
  const stop = () => void node.close().then(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
}
