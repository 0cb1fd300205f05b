import { FiberRef } from "effect"
import { globalValue } from "effect/GlobalValue"

export interface RequestContext {
  readonly requestId: string
  /** Absolute origin that error `docUrl`s point at, e.g. `https://api.scaledger.example`. */
  readonly docBase: string
}

/**
 * The request being served. The HTTP layer sets it for the duration of a request so that error bodies can name the
 * request id and link to the service's own error docs without every handler passing them along.
 */
export const CurrentRequest: FiberRef.FiberRef<RequestContext> = globalValue(
  Symbol.for("@scaledger/domain/CurrentRequest"),
  () => FiberRef.unsafeMake<RequestContext>({ requestId: "", docBase: "" })
)
