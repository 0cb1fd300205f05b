import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import * as Net from "node:net"
import * as Path from "node:path"

export const ROOT = Path.resolve(import.meta.dirname, "../..")
/**
 * Node itself with tsx's loader, not tsx's CLI: the CLI runs the entry in a child process of its own, which a SIGKILL
 * of the spawned process (a test's clean-up) would leave running.
 */
const underTsx = (entry: "main" | "cli", args: ReadonlyArray<string>) => [
  "--import",
  "tsx",
  Path.join(ROOT, `packages/server/src/${entry}.ts`),
  ...args
]

export const freePort = async (): Promise<number> => {
  const server = Net.createServer()
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const port = (server.address() as Net.AddressInfo).port
  server.close()
  await once(server, "close")
  return port
}

export interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>
}

/** Runs one of the service's entry points from its sources under tsx (`npm start` runs the same code compiled). */
export const runEntry = (entry: "main" | "cli", args: ReadonlyArray<string>, env: Record<string, string>): Running => {
  const child = spawn(process.execPath, underTsx(entry, args), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (chunk) => (output += chunk))
  child.stderr!.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

/** Runs a CLI command to completion, keeping stdout and stderr apart. */
export const runCli = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, underTsx("cli", args), {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const [code] = await once(child, "exit")
  return { code: code as number | null, stdout, stderr }
}

export const waitFor = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 150))
  }
}

export const ready = (port: number) =>
  waitFor(`/readyz on port ${port}`, async () => {
    const response = await fetch(`http://127.0.0.1:${port}/readyz`)
    return response.status === 200 ? true : undefined
  })
