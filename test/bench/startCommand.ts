import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { ROOT } from "../support/Processes.js"

/**
 * The service as `npm start` runs it: `prestart`'s build first, then `node <flags> <entry>` read from the start
 * script, for a bench to start that node process itself (so that its pid is the service's). `BENCH_NODE_FLAGS`
 * replaces the flags (the export conditions kept).
 */
export const startCommand = (): ReadonlyArray<string> => {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: "inherit" })
  const start = (JSON.parse(Fs.readFileSync(Path.join(ROOT, "package.json"), "utf8")) as {
    readonly scripts: Record<string, string>
  }).scripts.start!.split(" ").filter((word) => word !== "" && word !== "exec")
  if (start[0] !== "node") throw new Error(`the start script does not run node: ${start.join(" ")}`)
  const entry = start[start.length - 1]!
  const startFlags = start.slice(1, -1)
  const conditions = startFlags.filter((flag) => flag.startsWith("--conditions"))
  const flags = process.env.BENCH_NODE_FLAGS === undefined
    ? startFlags
    : [...conditions, ...process.env.BENCH_NODE_FLAGS.split(" ").filter((flag) => flag !== "")]
  return [...flags, Path.join(ROOT, entry)]
}
