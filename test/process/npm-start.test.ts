import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, ready, ROOT } from "../support/Processes.js"

const tmpDirs: Array<string> = []
afterAll(() => {
  for (const dir of tmpDirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/** The pids of a process's descendants, from /proc (children of each thread's task). */
const descendants = (pid: number): Array<number> => {
  const children = Fs.readdirSync(`/proc/${pid}/task`).flatMap((task) =>
    Fs.readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim().split(" ").filter((p) => p !== "").map(Number)
  )
  return children.flatMap((child) => [child, ...descendants(child)])
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// Users and supervisors stop the service by signalling the process they started: `npm start`'s, not node's.
describe("npm start", () => {
  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s to npm stops the service it started: npm exits 0 and no process of the tree is left",
    async (signal) => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-npm-start-"))
      tmpDirs.push(dataDir)
      const port = await freePort()
      const npm = spawn("npm", ["start", "--", "--api"], {
        cwd: ROOT,
        env: { ...process.env, SCALEDGER_DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: "", HOST: "127.0.0.1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      npm.stdout.on("data", (chunk) => (output += chunk))
      npm.stderr.on("data", (chunk) => (output += chunk))
      const exited = new Promise<number | null>((resolve) => npm.on("exit", (code) => resolve(code)))
      let tree: Array<number> = []
      try {
        await ready(port).catch(async () => ready(port)).catch(async () => ready(port))
        tree = descendants(npm.pid!)
        expect(tree.length).toBeGreaterThan(0)
        npm.kill(signal)
        const stopped = new Promise((resolve) => setTimeout(() => resolve("npm still running 30 s later"), 30_000))
        expect(await Promise.race([exited, stopped]), output).toBe(0)
        const deadline = Date.now() + 5_000
        while (tree.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
        expect(tree.filter(alive), output).toEqual([])
      } finally {
        for (const pid of [npm.pid!, ...tree]) if (alive(pid)) process.kill(pid, "SIGKILL")
      }
    },
    240_000
  )

  // Ctrl-C in a terminal signals the whole foreground group: node gets the terminal's SIGINT and, a few milliseconds
  // later, the copy npm forwards. The copy must not cut the shutdown short.
  it(
    "Ctrl-C (SIGINT to npm's process group) lets a request in flight finish: it is answered and npm exits 0",
    async () => {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-npm-start-"))
      tmpDirs.push(dataDir)
      const port = await freePort()
      const npm = spawn("npm", ["start", "--", "--api"], {
        cwd: ROOT,
        detached: true,
        env: { ...process.env, SCALEDGER_DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: "", HOST: "127.0.0.1" },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      npm.stdout.on("data", (chunk) => (output += chunk))
      npm.stderr.on("data", (chunk) => (output += chunk))
      const exited = new Promise<number | null>((resolve) => npm.on("exit", (code) => resolve(code)))
      let tree: Array<number> = []
      try {
        await ready(port).catch(async () => ready(port)).catch(async () => ready(port))
        tree = descendants(npm.pid!)
        // A request whose body is still arriving when the signal comes (the 401 needs the whole request first).
        const socket = Net.connect(port, "127.0.0.1")
        await new Promise((resolve) => socket.on("connect", resolve))
        let answer = ""
        socket.on("data", (chunk) => (answer += chunk))
        socket.on("error", () => {})
        const closed = new Promise((resolve) => socket.on("close", resolve))
        socket.write(
          "PUT /v1/settings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{"
        )
        await new Promise((resolve) => setTimeout(resolve, 300))
        process.kill(-npm.pid!, "SIGINT")
        await new Promise((resolve) => setTimeout(resolve, 1_000))
        socket.write(`"country":"US"}`)
        const stopped = new Promise((resolve) => setTimeout(() => resolve("npm still running 30 s later"), 30_000))
        expect(await Promise.race([exited, stopped]), output).toBe(0)
        await closed
        expect(answer.split("\r\n")[0], output).toBe("HTTP/1.1 401 Unauthorized")
        const deadline = Date.now() + 5_000
        while (tree.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
        expect(tree.filter(alive), output).toEqual([])
      } finally {
        for (const pid of [npm.pid!, ...tree]) if (alive(pid)) process.kill(pid, "SIGKILL")
      }
    },
    240_000
  )
})
