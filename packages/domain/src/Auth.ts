import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import { Context, Schema } from "effect"
import { SafeTextMax } from "./Basic.js"
import { RateLimitedError, ServiceUnavailableError, Unauthorized, UnauthorizedError } from "./Errors.js"

export interface Account {
  readonly id: string
  readonly name: string
}

/**
 * An account's name, as `scaledger keys` takes it: 1 to 200 characters, no control characters. One schema for the
 * CLI's `--account` and the admin endpoint, so a name is refused alike whether or not a server holds the database.
 */
export const AccountName = SafeTextMax(200).pipe(Schema.minLength(1))

/** The account whose API key authenticated the current request. */
export class CurrentAccount extends Context.Tag("@scaledger/domain/CurrentAccount")<CurrentAccount, Account>() {}

/** `Authorization: Bearer <API_KEY>` on every `/v1` route; provides the key's account; counts the key's rate. */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("@scaledger/domain/Authentication", {
  provides: CurrentAccount,
  failure: Schema.Union(UnauthorizedError, ServiceUnavailableError, RateLimitedError),
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export { Unauthorized }
