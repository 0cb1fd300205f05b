import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

/**
 * A secret kept in the data folder (mode 0600): the file's text when it exists, else 32 random bytes in hex, written
 * once. The file is written whole under a temporary name and then linked to its name, which fails when the name
 * exists: a process starting beside this one, or after a crash in the middle, reads a whole secret or none, never
 * a file created but not yet written. Synchronous: it runs once, at start.
 */
export const readOrCreateSecretFile = (dataDir: string, name: string): string => {
  const folder = Path.resolve(dataDir)
  const file = Path.join(folder, name)
  Fs.mkdirSync(folder, { recursive: true })
  if (!Fs.existsSync(file)) {
    const draft = Path.join(folder, `.${name}.${process.pid}.${randomBytes(6).toString("hex")}`)
    const fd = Fs.openSync(draft, "wx", 0o600)
    try {
      Fs.writeSync(fd, randomBytes(32).toString("hex"))
      Fs.fsyncSync(fd)
    } finally {
      Fs.closeSync(fd)
    }
    try {
      Fs.linkSync(draft, file)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    } finally {
      Fs.rmSync(draft, { force: true })
    }
  }
  const secret = Fs.readFileSync(file, "utf8").trim()
  if (secret === "") {
    throw new Error(
      `${file} is empty: a start was cut off while writing it. Delete it and a new secret is made at the next start ` +
        `(API keys and webhook secrets made under the empty one must then be made again).`
    )
  }
  return secret
}
