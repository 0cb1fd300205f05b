import { Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"

/** Where a running server tells the CLI how to reach its loopback admin endpoint (mode 0600, in the data folder). */
export const adminFilePath = (dataDir: string) => Path.join(dataDir, "admin.json")

export const AdminFile = Schema.Struct({ url: Schema.String, token: Schema.String, pid: Schema.Int })
export type AdminFile = typeof AdminFile.Type

export const readAdminFile = (dataDir: string): AdminFile | undefined => {
  try {
    return Schema.decodeUnknownSync(AdminFile)(JSON.parse(Fs.readFileSync(adminFilePath(dataDir), "utf8")))
  } catch {
    return undefined
  }
}
