/**
 * The set of watched addresses as a lock held to the end of a transaction: shared by a recording that stores the
 * transfers of the addresses it finds still watched (`ChainStore.stillWatched`), exclusive by a wallet's removal
 * (`WalletsRepo.remove`), which then sees every transfer such a recording kept and deletes the orphaned ones.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const lockWalletSetShared = (sql: SqlClient.SqlClient) =>
  Effect.asVoid(sql`SELECT pg_advisory_xact_lock_shared(hashtext('scaledger:wallet-set'))`)

export const lockWalletSetExclusive = (sql: SqlClient.SqlClient) =>
  Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtext('scaledger:wallet-set'))`)
