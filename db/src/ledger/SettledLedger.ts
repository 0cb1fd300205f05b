import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { BuildState } from "./LedgerStore.js"

/** An account's stored build as the API reads it: its state, the report summary and the position rows. */
export interface SettledBuild {
  readonly state: BuildState
  /** The stored report summary (`ledger_builds.report`); none before the first build. */
  readonly report: Option.Option<unknown>
  readonly positions: ReadonlyArray<unknown>
}

/** How many accounts' builds are kept parsed in memory (least recently read dropped first). */
export const SETTLED_CACHE_ACCOUNTS = 256

interface StateRow {
  readonly requested_version: string
  readonly replay_version: string
  readonly built_version: string
  readonly built_at: Date | null
  readonly status: BuildState["status"]
  readonly error: string | null
}

const stateOf = (row: StateRow): BuildState => ({
  requestedVersion: Number(row.requested_version),
  replayVersion: Number(row.replay_version),
  builtVersion: Number(row.built_version),
  builtAt: row.built_at,
  status: row.status,
  error: row.error
})

/** A stored build is replaced whole, with a new `built_at`: version and time name its content. */
const buildKey = (state: BuildState) => `${state.builtVersion}@${state.builtAt?.getTime() ?? "never"}`

/**
 * The reads behind `GET /v1/positions` and `GET /v1/portfolio` at one small query per request: the build's state is
 * read every time (so a new build, a replay or a failure shows at once), the report and position rows (tens of KB
 * of JSON for a long history) only when the stored build changed since this process last read them.
 */
export class SettledLedger extends Effect.Service<SettledLedger>()("@scaledger/db/SettledLedger", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const cache = new Map<
      string,
      { readonly key: string; readonly report: unknown; readonly positions: Array<unknown> }
    >()

    const remember = (accountId: string, key: string, report: unknown, positions: Array<unknown>) => {
      cache.delete(accountId)
      if (cache.size >= SETTLED_CACHE_ACCOUNTS) cache.delete(cache.keys().next().value!)
      cache.set(accountId, { key, report, positions })
    }

    /** Report and positions of one stored build, read in one statement (one snapshot). */
    const loadBuild = (accountId: string) =>
      Effect.map(
        sql<StateRow & { report: unknown; positions: Array<unknown> | null }>`
          SELECT requested_version, replay_version, built_version, built_at, status, error, report,
            (SELECT json_agg(p.row ORDER BY p.ord) FROM ledger_positions p WHERE p.account_id = b.account_id)
              AS positions
          FROM ledger_builds b WHERE account_id = ${accountId}`,
        (rows) => Option.fromNullable(rows[0])
      )

    const settled = (accountId: string) =>
      Effect.gen(function*() {
        const [row] = yield* sql<StateRow>`
          SELECT requested_version, replay_version, built_version, built_at, status, error
          FROM ledger_builds WHERE account_id = ${accountId}`
        if (row === undefined) return Option.none<SettledBuild>()
        const state = stateOf(row)
        const known = cache.get(accountId)
        if (known !== undefined && known.key === buildKey(state)) {
          remember(accountId, known.key, known.report, known.positions)
          return Option.some<SettledBuild>({
            state,
            report: Option.fromNullable(known.report),
            positions: known.positions
          })
        }
        const loaded = yield* loadBuild(accountId)
        if (Option.isNone(loaded)) return Option.none<SettledBuild>()
        // A build stored between the two statements: the second one's state goes with its rows.
        const fresh = stateOf(loaded.value)
        const positions = loaded.value.positions ?? []
        remember(accountId, buildKey(fresh), loaded.value.report, positions)
        return Option.some<SettledBuild>({ state: fresh, report: Option.fromNullable(loaded.value.report), positions })
      })

    return { settled } as const
  })
}) {}
