import { beginDrain, makeNodeServer } from "@scaledger/server/http/NodeServer"
import type { AddressInfo } from "node:net"
import * as Net from "node:net"
import { expect, it } from "vitest"

it("a shutdown cuts an answer its client stopped reading once the drain deadline passed, and refuses new requests", async () => {
  const server = makeNodeServer()()
  // An answer that never ends, as a long export to a client that stopped reading looks to the server.
  server.on("request", (_request, response) => {
    response.writeHead(200, { "content-type": "text/csv" })
    response.write("a,b\r\n")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const socket = Net.connect(port, "127.0.0.1")
  const closed = new Promise<number>((resolve) => socket.once("close", () => resolve(Date.now())))
  socket.write("GET /v1/exports/x HTTP/1.1\r\nHost: x\r\n\r\n")
  await new Promise((resolve) => socket.once("data", resolve))

  const started = Date.now()
  beginDrain(300)
  // A new request meanwhile is answered 503 at once.
  const late = await new Promise<string>((resolve) => {
    const other = Net.connect(port, "127.0.0.1", () => other.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"))
    let text = ""
    other.on("data", (chunk) => (text += chunk))
    other.on("close", () => resolve(text))
  })
  expect(late).toMatch(/^HTTP\/1\.1 503 /)
  // The stalled answer's connection is closed at the deadline, not held until its client reads.
  const at = await closed
  expect(at - started).toBeGreaterThanOrEqual(250)
  expect(at - started).toBeLessThan(5_000)
  await new Promise<void>((resolve) => server.close(() => resolve()))
})
