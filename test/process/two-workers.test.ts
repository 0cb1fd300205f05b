import { SqlClient } from "@effect/sql"
import { AccountsRepo } from "@scaledger/db/Accounts"
import * as Database from "@scaledger/db/Database"
import * as TestDatabase from "@scaledger/db/testing/TestDatabase"
import { ApiKeys } from "@scaledger/server/auth/ApiKeys"
import { KeyHashSecret } from "@scaledger/server/auth/KeyHashSecret"
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { Hex } from "viem"
import { afterAll, describe, expect, it } from "vitest"
import { EXCHANGE, walletAddress, writeHistory } from "../bench/scaleChain.js"
import { startSeededNode, toJson } from "../chain/seed.js"
import { freePort, runEntry, type Running, waitFor } from "../support/Processes.js"

const WALLETS = 8
const ACCOUNTS = 3
const SECRET = "two-workers-key-hash-secret"

const dirs: Array<string> = []
afterAll(() => {
  for (const dir of dirs) Fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * Every claim of a backfill or a ledger build (the job, for a build the input version it was given at) and every
 * stored build, with the lease owner: a record the workers cannot leave out, kept by the database itself. A claim is
 * a lease going to an owner that did not hold it (from nobody, or taken from another worker).
 */
const AUDIT = [
  `CREATE TABLE job_audit (kind text NOT NULL, job text NOT NULL, version bigint NOT NULL, owner text)`,
  `CREATE FUNCTION build_audit() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.lease_owner IS NOT NULL AND OLD.lease_owner IS DISTINCT FROM NEW.lease_owner THEN
       INSERT INTO job_audit VALUES ('build claimed', NEW.account_id, NEW.requested_version, NEW.lease_owner);
     END IF;
     IF NEW.built_at IS DISTINCT FROM OLD.built_at THEN
       INSERT INTO job_audit VALUES ('build stored', NEW.account_id, NEW.built_version, OLD.lease_owner);
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER build_audit AFTER UPDATE ON ledger_builds FOR EACH ROW EXECUTE FUNCTION build_audit()`,
  `CREATE FUNCTION backfill_audit() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF NEW.lease_owner IS NOT NULL AND OLD.lease_owner IS DISTINCT FROM NEW.lease_owner THEN
       INSERT INTO job_audit VALUES ('backfill claimed', NEW.wallet_id, 0, NEW.lease_owner);
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER backfill_audit AFTER UPDATE ON wallet_backfills FOR EACH ROW EXECUTE FUNCTION backfill_audit()`
]

const backfillLines = (output: string, what: "blocks" | "done") =>
  [...output.matchAll(new RegExp(`message="backfill (0x[0-9a-f]{40}): ${what}`, "g"))].map((m) => m[1]!)

describe("two worker processes on one PostgreSQL", () => {
  it("share the backfills and the ledger builds: each done once, all of them, with the chain's figures", async () => {
    const { node, tokenList, manifest } = await startSeededNode()
    const processes: Array<Running> = []
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "scaledger-two-workers-"))
    dirs.push(dir)
    try {
      const tokens = manifest.tokens.filter((t) => t.feedAddress !== undefined).map((t) => t.address as Hex)
      const history = await writeHistory({
        node,
        tokens,
        wallets: WALLETS,
        events: 600,
        perTx: 40,
        startTime: manifest.headTimestamp + 3600,
        progress: () => {}
      })
      Fs.writeFileSync(Path.join(dir, "tokens.json"), toJson(tokenList))
      Fs.writeFileSync(
        Path.join(dir, "contracts.json"),
        JSON.stringify([{ chainId: node.chainId, address: EXCHANGE, kind: "exchange", name: "Test exchange" }])
      )
      await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const url = yield* TestDatabase.postgresUrl
        const context = yield* Layer.build(
          ApiKeys.Default.pipe(
            Layer.provideMerge(AccountsRepo.Default),
            Layer.provideMerge(Layer.succeed(KeyHashSecret, Redacted.make(SECRET))),
            Layer.provideMerge(
              Database.layerWith({ _tag: "Postgres", url: Redacted.make(url) }).pipe(Layer.orDie)
            )
          )
        )
        const sql = yield* Effect.provide(SqlClient.SqlClient, context)
        for (const statement of AUDIT) yield* sql.unsafe(statement)
        const apiKeys = yield* Effect.provide(ApiKeys, context)
        const keys = yield* Effect.forEach(
          Array.from({ length: ACCOUNTS }, (_, a) => `two-workers-${a}`),
          (name) => Effect.map(apiKeys.create(name), (created) => created.key)
        )

        const port = yield* Effect.promise(freePort)
        const env = {
          DATABASE_URL: url,
          KEY_HASH_SECRET: SECRET,
          SCALEDGER_DATA_DIR: dir,
          PORT: String(port),
          HOST: "127.0.0.1",
          RPC_URL: node.wsUrl,
          CHAIN_ID: String(node.chainId),
          TOKEN_LIST: Path.join(dir, "tokens.json"),
          CONTRACT_LIST: Path.join(dir, "contracts.json"),
          FINALITY_DEPTH: "5",
          FX_REFRESH: "off",
          BACKFILL_POLL_MS: "200",
          LEDGER_POLL_MS: "200",
          LEDGER_MIN_INTERVAL_MS: "500",
          RATE_LIMIT_PER_MINUTE: "0"
        }
        const workers = [runEntry("main", ["--workers"], env), runEntry("main", ["--workers"], env)]
        const api = runEntry("main", ["--api"], env)
        for (const running of [...workers, api]) processes.push(running)
        yield* Effect.promise(() =>
          waitFor(
            "the API process",
            async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok || undefined,
            150_000
          )
            .catch((error) => Promise.reject(new Error(`${error}\n${api.output()}`)))
        )
        // The recorder begins at the first new head it sees: the idle test chain is given heads until it has.
        yield* Effect.promise(() =>
          waitFor("the recorder's first head", async () => {
            const [row] = await Effect.runPromise(sql<{ n: string }>`SELECT count(*) AS n FROM chain_cursors`)
            if (Number(row!.n) > 0) return true
            await node.mine(1)
            return undefined
          }, 60_000)
        )

        const auth = (w: number) => ({ authorization: `Bearer ${keys[w % ACCOUNTS]!}` })
        for (let w = 0; w < WALLETS; w++) {
          const added = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/v1/wallets`, {
              method: "POST",
              headers: { ...auth(w), "content-type": "application/json" },
              body: JSON.stringify({ address: walletAddress(w), label: `w${w}`, self: true })
            })
          )
          expect(added.status).toBe(201)
        }
        let left = ""
        yield* Effect.promise(() =>
          waitFor("every backfill and build", async () => {
            const [row] = await Effect.runPromise(sql<{ backfills: string; builds: string; queued: string }>`
              SELECT (SELECT count(*) FROM wallet_backfills WHERE phase <> 'done') AS backfills,
                     (SELECT count(*) FROM ledger_builds
                      WHERE built_version < requested_version OR status <> 'ready') AS builds,
                     (SELECT count(*) FROM transfer_classifications WHERE status = 'pending') AS queued`)
            left = `${row!.backfills} backfills, ${row!.builds} builds, ${row!.queued} classifications`
            return Number(row!.backfills) + Number(row!.builds) + Number(row!.queued) === 0 || undefined
          }, 150_000).catch((error) =>
            Promise.reject(
              new Error(`${error} (left: ${left})\n${workers.map((w) => w.output().slice(-3000)).join("\n")}`)
            )
          )
        )

        // One process records the chain and polls prices; the other stands by (each block is read once).
        for (const role of ["recorder", "price recorder"]) {
          const standing = workers.filter((w) =>
            w.output().includes(`message="${role}: another worker process plays this role`)
          )
          expect(standing).toHaveLength(1)
        }
        expect(workers.filter((w) => w.output().includes(`message="recorder: watching chain`))).toHaveLength(1)

        // Each wallet's backfill ran once, in one of the two processes, and both took some.
        const started = workers.map((w) => backfillLines(w.output(), "blocks"))
        const done = workers.map((w) => backfillLines(w.output(), "done"))
        const addresses = Array.from({ length: WALLETS }, (_, w) => walletAddress(w).toLowerCase()).sort()
        expect([...started[0]!, ...started[1]!].sort()).toEqual(addresses)
        expect([...done[0]!, ...done[1]!].sort()).toEqual(addresses)
        expect(started.map((lines) => lines.length > 0)).toEqual([true, true])
        // None failed an attempt or kept a lease (the rows, and what the workers warned of, say why if one did).
        const unsettled = yield* sql<{ wallet_id: string; attempts: number; last_error: string | null }>`
          SELECT wallet_id, attempts, last_error FROM wallet_backfills
          WHERE NOT (attempts = 0 AND last_error IS NULL AND lease_owner IS NULL)`
        const warnings = () =>
          workers.map((w) => w.output().split("\n").filter((line) => line.includes("level=WARN")).join("\n"))
            .join("\n")
        expect(unsettled, `${JSON.stringify(unsettled)}\n${warnings()}`).toEqual([])

        // Each wallet's backfill was leased (and, above, finished) by one worker at a time, and each version of each
        // account's inputs was built once: claimed by one worker, never taken from another, stored once. A job is
        // leased again only after a lease ran out or an attempt failed (the machine under load): then it resumes
        // from its checkpoint, and the workers' warnings are shown.
        const audit = yield* sql<{ kind: string; job: string; version: string; owner: string | null }>`
          SELECT kind, job, version, owner FROM job_audit`
        const of = (kind: string) => audit.filter((row) => row.kind === kind).map((row) => `${row.job}@${row.version}`)
        const backfillClaims = of("backfill claimed")
        expect(new Set(backfillClaims).size).toBe(WALLETS)
        if (backfillClaims.length > WALLETS) {
          console.log(`backfill jobs leased again: ${JSON.stringify(backfillClaims)}\n${warnings()}`)
        }
        const claims = of("build claimed")
        const stores = of("build stored")
        expect(claims.length).toBeGreaterThan(0)
        expect(new Set(claims).size).toBe(claims.length)
        expect(new Set(stores).size).toBe(stores.length)
        expect(audit.filter((row) => row.kind === "build stored").every((row) => row.owner !== null)).toBe(true)
        const accounts = yield* sql<{ n: string }>`SELECT count(*) AS n FROM ledger_builds WHERE status = 'ready'`
        expect(Number(accounts[0]!.n)).toBe(ACCOUNTS)

        // The figures: every wallet's balance of every token is the chain's.
        for (let w = 0; w < WALLETS; w++) {
          const response = yield* Effect.promise(() =>
            fetch(`http://127.0.0.1:${port}/v1/positions?wallet=${walletAddress(w)}`, { headers: auth(w) })
          )
          expect(response.status).toBe(200)
          const body = (yield* Effect.promise(() => response.json())) as {
            positions: Array<{ token: string; balance: string }>
          }
          for (const token of tokens) {
            const symbol = tokenList.tokens.find((t) => t.address === token)!.symbol
            const shown = body.positions.find((p) => p.token === symbol)?.balance ?? "0"
            expect(`${symbol} ${Number(shown)}`).toBe(
              `${symbol} ${Number(history.balances.get(token)![w]! / 10n ** 18n)}`
            )
          }
        }
      })))
    } finally {
      for (const running of processes) {
        running.child.kill("SIGTERM")
        await running.exited
      }
      await node.close()
    }
  }, 300_000)
})
