import * as Fs from "node:fs"
import type { IncomingHttpHeaders } from "node:http"
import * as Https from "node:https"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import Stripe from "stripe"

const TLS = Path.join(import.meta.dirname, "tls")
/** The test certificate authority that signed the receiver's certificate (localhost, 127.0.0.1, ::1). */
export const TEST_CA_PATH = Path.join(TLS, "ca.pem")
export const TEST_CA = Fs.readFileSync(TEST_CA_PATH, "utf8")

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export interface Answer {
  readonly status: number
  readonly headers?: Record<string, string>
  readonly body?: string
  /** Wait this long before answering. */
  readonly delayMs?: number
  /** Send the status, headers and body, then never end the answer. */
  readonly neverEnds?: boolean
}

export interface Receiver {
  readonly port: number
  readonly url: (path?: string) => string
  readonly received: Array<Received>
  /** How the next requests are answered: a fixed answer, a queue consumed in order (then 200), or a function. */
  answer: Answer | Array<Answer> | ((request: Received) => Answer)
  readonly close: () => Promise<void>
}

/** A local HTTPS webhook receiver with the test CA's certificate, recording every request. */
export const startReceiver = async (host = "127.0.0.1"): Promise<Receiver> => {
  const received: Array<Received> = []
  const receiver: Receiver = {
    port: 0,
    url: () => "",
    received,
    answer: { status: 200 },
    close: async () => {}
  }
  const server = Https.createServer({
    key: Fs.readFileSync(Path.join(TLS, "server.key")),
    cert: Fs.readFileSync(Path.join(TLS, "server.pem"))
  }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const request: Received = {
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        at: Date.now()
      }
      received.push(request)
      const spec = receiver.answer
      const answer = typeof spec === "function"
        ? spec(request)
        : Array.isArray(spec)
        ? (spec.shift() ?? { status: 200 })
        : spec
      const reply = () => {
        res.writeHead(answer.status, answer.headers ?? {})
        if (answer.neverEnds === true) res.write(answer.body ?? "")
        else res.end(answer.body ?? "")
      }
      if (answer.delayMs === undefined) reply()
      else setTimeout(reply, answer.delayMs)
    })
  })
  server.keepAliveTimeout = 1_000
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as AddressInfo).port
  return Object.assign(receiver, {
    port,
    url: (path = "/hook") => `https://localhost:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
}

/**
 * Verifies a delivery as a receiver would, with Stripe's library (nobody here wrote it): the signature over
 * `<t>.<rawBody>` under the endpoint secret, within the 300 s replay window. Throws when it does not verify.
 */
export const verifyWithStripe = (request: Received, secret: string) => {
  const header = request.headers["scaledger-signature"]
  if (typeof header !== "string") throw new Error("no Scaledger-Signature header")
  Stripe.webhooks.signature!.verifyHeader(request.body, header, secret, 300)
  return JSON.parse(request.body) as {
    id: string
    type: string
    createdAt: number
    data: { kind: string; severity: string; title: string; detail: string; symbol: string; at: number }
  }
}
