/**
 * `npm run lint:openapi`: writes the OpenAPI document exactly as the service serves it at `/v1/openapi.json`
 * (`OpenApi.fromApi(ScaledgerApi)`, the same call `HttpLayerRouter.addHttpApi` makes) to a temporary file and lints it
 * with Redocly's `recommended` rules. Offline: no telemetry, no update check, no remote config.
 */
import { OpenApi } from "@effect/platform"
import { ScaledgerApi } from "@scaledger/domain/Api"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-openapi-"))
const file = Path.join(dir, "openapi.json")
const config = Path.join(dir, "redocly.yaml")
try {
  Fs.writeFileSync(file, JSON.stringify(OpenApi.fromApi(ScaledgerApi), null, 2))
  Fs.writeFileSync(config, "extends:\n  - recommended\n")
  const result = spawnSync(
    Path.join(root, "node_modules/.bin/redocly"),
    ["lint", file, "--config", config, "--format", "stylish"],
    {
      stdio: "inherit",
      env: {
        ...process.env,
        REDOCLY_TELEMETRY: "off",
        REDOCLY_SUPPRESS_UPDATE_NOTICE: "true",
        REDOCLY_CLI_TELEMETRY: "off"
      }
    }
  )
  process.exitCode = result.status ?? 1
} finally {
  Fs.rmSync(dir, { recursive: true, force: true })
}
