import type { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import type { Statement } from "@effect/sql/Statement"
import { Effect } from "effect"

/**
 * The rows of `query` through a server-side cursor `name` of the current transaction, `fetch` at a time, to
 * `onBatch`: a result of any size read in batches of one snapshot (under REPEATABLE READ), never held whole.
 */
export const eachBatch = <A, E, R>(
  sql: SqlClient.SqlClient,
  name: string,
  query: Statement<unknown>,
  fetch: number,
  onBatch: (rows: ReadonlyArray<A>) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | SqlError, R> =>
  Effect.gen(function*() {
    const [text, params] = query.compile()
    yield* sql.unsafe(`DECLARE ${name} NO SCROLL CURSOR FOR ${text}`, params)
    for (;;) {
      const rows = yield* sql.unsafe<A & object>(`FETCH ${fetch} FROM ${name}`)
      if (rows.length > 0) yield* onBatch(rows)
      if (rows.length < fetch) break
    }
    yield* sql.unsafe(`CLOSE ${name}`)
  })
