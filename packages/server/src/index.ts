export * as Config from "./Config.js"
export * as RestServer from "./http/RestServer.js"
export * as StartupFailure from "./StartupFailure.js"
export * as Telemetry from "./Telemetry.js"
