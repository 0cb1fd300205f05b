import type { Scope } from "effect"
import { Data, Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{
  readonly dataDir: string
  readonly pid: number
}> {
  override get message() {
    return `The embedded database in ${this.dataDir} is in use by process ${this.pid}. ` +
      `Stop that process, or point SCALEDGER_DATA_DIR elsewhere.`
  }
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** The process holding the data folder's lock, if it is still alive. */
export const lockHolder = (dataDir: string): number | undefined => {
  try {
    const pid = Number(Fs.readFileSync(Path.join(dataDir, "pglite.lock"), "utf8").trim())
    return Number.isInteger(pid) && pid > 0 && isAlive(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt it. The lock is a
 * file holding the owner's pid; a lock whose process is gone (a crash, kill -9) is taken over.
 */
export const acquireDataDirLock = (dataDir: string): Effect.Effect<void, DataDirLocked, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      Fs.mkdirSync(dataDir, { recursive: true })
      const lockPath = Path.join(dataDir, "pglite.lock")
      const holder = lockHolder(dataDir)
      if (holder !== undefined && holder !== process.pid) {
        return Effect.fail(new DataDirLocked({ dataDir, pid: holder }))
      }
      Fs.writeFileSync(lockPath, String(process.pid))
      return Effect.succeed(lockPath)
    }),
    (lockPath) =>
      Effect.sync(() => {
        if (lockHolder(Path.dirname(lockPath)) === process.pid) Fs.rmSync(lockPath, { force: true })
      })
  )
