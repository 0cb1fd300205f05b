/**
 * Creates an embedded database's data folder (PGlite's `initdb`) and exits. Run as a child process by
 * `PgliteClient` on a first start: `initdb` leaves about 500 MB behind in the process that runs it (a second
 * WebAssembly instance and its file bundle), which the service would otherwise keep for its whole life.
 */
import { PGlite } from "@electric-sql/pglite"
import { POSTGRES_CONF } from "./PgliteSettings.js"

const dataDir = process.argv[2]
if (dataDir === undefined) {
  console.error("usage: PgliteInit <dataDir>")
  process.exit(2)
}
PGlite.create({ dataDir, postgresqlconf: POSTGRES_CONF })
  .then((db) => db.close())
  .then(() => process.exit(0), (error) => {
    console.error(String(error))
    process.exit(1)
  })
