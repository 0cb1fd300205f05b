import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Context, Schema } from "effect"
import { RateLimitedError, ServiceUnavailableError, Unauthorized, UnauthorizedError } from "./Errors.js"

export interface Account {
  readonly id: string
  readonly name: string
}

/** The account whose API key authenticated the current request. */
export class CurrentAccount extends Context.Tag("@scaledger/domain/CurrentAccount")<CurrentAccount, Account>() {}

/** `Authorization: Bearer <API_KEY>` on every `/v1` route; provides the key's account; counts the key's rate. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@scaledger/domain/Authentication", {
  provides: CurrentAccount,
  failure: Schema.Union(UnauthorizedError, ServiceUnavailableError, RateLimitedError),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export { Unauthorized }
