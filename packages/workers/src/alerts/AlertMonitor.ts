import {
  AlertSources,
  type ChangeFact,
  type DegradedBackfill,
  type HeldToken,
  type ReviewBacklog,
  type Watermark
} from "@scaledger/db/alerts/AlertSources"
import { type AlertCause, type AlertRow, AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { FxRates } from "@scaledger/db/FxRates"
import { SEVERITY_OF } from "@scaledger/domain/alerts/Alert"
import { feedStaleAt, isFeedStale } from "@scaledger/domain/alerts/OracleStaleness"
import { Array as Arr, Clock, Duration, Effect, Exit, Layer } from "effect"
import { WebhookConfig } from "../webhooks/WebhookConfig.js"

const ONE = 10n ** 18n

/** An 18-decimal fixed-point integer string as a decimal string without trailing zeros. */
export const fixed18 = (raw: string | bigint): string => {
  const value = BigInt(raw)
  const negative = value < 0n
  const abs = negative ? -value : value
  const whole = abs / ONE
  const fraction = (abs % ONE).toString().padStart(18, "0").replace(/0+$/, "")
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`
}

const symbolOf = (fact: { readonly symbol: string | null; readonly tokenKey: string }) => fact.symbol ?? fact.tokenKey

const changeKey = (fact: ChangeFact) => `${fact.chainId}:${fact.tokenKey}:${fact.effectiveAt.getTime()}`

/** The facts of the record that are the same for every account: read once per pass, not once per account. */
export const sharedFacts = (needFx: boolean) =>
  Effect.gen(function*() {
    const sources = yield* AlertSources
    return {
      pausedTokens: yield* sources.pausedTokens,
      latestRounds: yield* sources.latestRounds(new Date(yield* Clock.currentTimeMillis)),
      oraclePausedTokens: yield* sources.oraclePausedTokens,
      degradedReads: yield* sources.degradedReads,
      fx: needFx ? yield* (yield* FxRates).status() : undefined
    }
  })

export type SharedFacts = Effect.Effect.Success<ReturnType<typeof sharedFacts>>

/** What one account's causes are made of besides the shared facts, read for many accounts at once (`accountFacts`). */
export interface AccountFacts {
  readonly held: ReadonlyArray<HeldToken>
  readonly pending: ReadonlyArray<ChangeFact>
  readonly recentSteps: ReadonlyArray<ChangeFact>
  readonly backlog: ReviewBacklog
  readonly degradedBackfills: ReadonlyArray<DegradedBackfill>
  readonly open: ReadonlyArray<AlertRow>
}

const NO_BACKLOG: ReviewBacklog = { count: 0, topCounterparty: null, topCount: 0 }

/**
 * The facts of each of `accountIds`, a statement per kind of fact for all of them (not one per account).
 * `knownHeld`: the held tokens of the accounts whose current ones the caller has; only the others' are read.
 */
export const accountFacts = (
  accountIds: ReadonlyArray<string>,
  knownHeld: ReadonlyMap<string, ReadonlyArray<HeldToken>> = new Map()
) =>
  Effect.gen(function*() {
    const sources = yield* AlertSources
    const store = yield* AlertsStore
    const config = yield* WebhookConfig
    const held = yield* sources.held(accountIds.filter((id) => !knownHeld.has(id)))
    const pending = yield* sources.pendingChanges(accountIds)
    const recentSteps = yield* sources.recentDividendSteps(accountIds, config.incomeOpenDays)
    const backlog = yield* sources.reviewBacklog(accountIds)
    const degradedBackfills = yield* sources.degradedBackfills(accountIds)
    const open = yield* store.openOf(accountIds)
    return new Map(accountIds.map((id): [string, AccountFacts] => [id, {
      held: knownHeld.get(id) ?? held.get(id) ?? [],
      pending: pending.get(id) ?? [],
      recentSteps: recentSteps.get(id) ?? [],
      backlog: backlog.get(id) ?? NO_BACKLOG,
      degradedBackfills: degradedBackfills.get(id) ?? [],
      open: open.get(id) ?? []
    }]))
  })

/** Every cause the record shows for one account right now (DECISIONS.md "Alerts"), from its facts. */
export const causesOf = (
  account: { readonly id: string; readonly reportingCurrency: string },
  now: number,
  shared: SharedFacts,
  facts: AccountFacts
) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const causes: Array<AlertCause> = []
    const heldKeys = new Set(facts.held.map((token) => `${token.chainId}:${token.tokenKey}`))

    for (const change of facts.pending) {
      const symbol = symbolOf(change)
      causes.push({
        key: `pending-multiplier:${changeKey(change)}`,
        kind: "pending-multiplier",
        severity: SEVERITY_OF["pending-multiplier"],
        title: `${symbol}: multiplier change announced`,
        detail: `${symbol}'s multiplier goes from ${fixed18(change.oldMultiplier)} to ${
          fixed18(change.newMultiplier)
        } (${change.kind}) at ${change.effectiveAt.toISOString()}; the account holds ${fixed18(change.balance)}.`,
        symbol,
        at: change.announcedAt ?? new Date(now),
        oneShot: true
      })
    }

    for (const step of facts.recentSteps) {
      const symbol = symbolOf(step)
      const added = (BigInt(step.balance) * (BigInt(step.newMultiplier) - BigInt(step.oldMultiplier))) / ONE
      causes.push({
        key: `accrued-income:${changeKey(step)}`,
        kind: "accrued-income",
        severity: SEVERITY_OF["accrued-income"],
        title: `${symbol}: dividend step, income accrued`,
        detail: `${symbol}'s multiplier went from ${fixed18(step.oldMultiplier)} to ${
          fixed18(step.newMultiplier)
        } at ${step.effectiveAt.toISOString()}: ${fixed18(step.balance)} tokens held gained ${
          fixed18(added)
        } shares of income.`,
        symbol,
        at: step.effectiveAt,
        oneShot: true
      })
    }

    // One pause, one cause: named by its first fact, a Paused event or (no event shows it) a `paused()` read. A pause
    // already alerted keeps its alert when an earlier fact of it is recorded later (a backfill finding the Paused
    // event before the read that first showed it): the same pause is not raised twice.
    for (const pause of shared.pausedTokens) {
      if (!heldKeys.has(`${pause.chainId}:${pause.tokenKey}`)) continue
      const symbol = symbolOf(pause)
      const fromEvent = pause.txHash !== null
      const prefix = `token-paused:${pause.chainId}:${pause.tokenKey}:`
      const alerted = facts.open.find((alert) => alert.causeKey.startsWith(prefix))?.causeKey
      causes.push({
        key: alerted ?? (fromEvent
          ? `${prefix}${pause.txHash}:${pause.logIndex}`
          : `${prefix}read:${pause.block}`),
        kind: "token-paused",
        severity: SEVERITY_OF["token-paused"],
        title: `${symbol}: token paused`,
        detail: (fromEvent
          ? `The issuer paused ${symbol} at ${pause.at.toISOString()} (transaction ${pause.txHash}); `
          : `${symbol}'s paused() read true at block ${pause.block} (${pause.at.toISOString()}) with no Paused ` +
            "event to explain it (a pause from before watching began, or the issuer-wide pause); ") +
          "transfers fail until it is unpaused.",
        symbol,
        at: pause.at,
        oneShot: true
      })
    }

    // A held token's feed silent for ORACLE_STALE_MINUTES of regular US session time, or its oracle paused on chain.
    // Measured by the chain's clock (its newest stored block), as the rounds are stamped: a chain whose clock differs
    // from this machine's (a test chain) works the same.
    for (const round of shared.latestRounds) {
      if (!heldKeys.has(`${round.chainId}:${round.tokenKey}`)) continue
      const clock = round.chainTime ?? new Date(now)
      if (!isFeedStale(round.updatedAt, clock, config.oracleStaleMinutes)) continue
      const symbol = symbolOf(round)
      causes.push({
        key: `oracle-paused:${round.chainId}:${round.tokenKey}:${round.updatedAt.getTime()}`,
        kind: "oracle-paused",
        severity: SEVERITY_OF["oracle-paused"],
        title: `${symbol}: price feed silent`,
        detail: `${symbol}'s price feed has given no new round since ${round.updatedAt.toISOString()}, ` +
          `${config.oracleStaleMinutes} minutes or more of regular US session time; its price is stale.`,
        symbol,
        at: clock,
        oneShot: true
      })
    }
    for (const pause of shared.oraclePausedTokens) {
      if (!heldKeys.has(`${pause.chainId}:${pause.tokenKey}`)) continue
      const symbol = symbolOf(pause)
      causes.push({
        key: `oracle-paused:event:${pause.chainId}:${pause.tokenKey}:${pause.txHash}:${pause.logIndex}`,
        kind: "oracle-paused",
        severity: SEVERITY_OF["oracle-paused"],
        title: `${symbol}: oracle paused`,
        detail: `The issuer paused ${symbol}'s oracle at ${pause.at.toISOString()} (transaction ${pause.txHash}).`,
        symbol,
        at: pause.at,
        oneShot: true
      })
    }

    const backlog = facts.backlog
    if (backlog.count > 0) {
      causes.push({
        key: "unlabeled-transfers",
        kind: "unlabeled-transfers",
        severity: SEVERITY_OF["unlabeled-transfers"],
        title: "Transfers await review",
        detail: `${backlog.count} movement(s) need review` +
          (backlog.topCounterparty === null
            ? "."
            : `; the most (${backlog.topCount}) involve ${backlog.topCounterparty}.`) +
          " Label the counterparty with PATCH /v1/events/{id}.",
        symbol: "",
        at: new Date(now),
        oneShot: false
      })
    }

    if (account.reportingCurrency !== "USD") {
      const status = shared.fx ?? (yield* (yield* FxRates).status())
      if (status.stale) {
        // Rates that stay stale while a newer (still old) day is loaded are the same cause: its alert is kept, its
        // detail updated, not resolved and raised (delivered) again.
        const alerted = facts.open.find((alert) => alert.kind === "stale-reference")?.causeKey
        causes.push({
          key: alerted ?? `stale-reference:${status.newestDay ?? "none"}`,
          kind: "stale-reference",
          severity: SEVERITY_OF["stale-reference"],
          title: "Exchange rates out of date",
          detail:
            `The newest ECB reference rates are from ${status.newestDay ?? "no day"}, ${
              status.businessDaysBehind ?? "all"
            } TARGET business days before ${status.today}; ${account.reportingCurrency} figures use them, and a figure ` +
            "whose rate would be carried forward more than 7 days is null (reason `stale_rate`).",
          symbol: "",
          at: new Date(now),
          oneShot: false
        })
      }
    }

    for (const wallet of facts.degradedBackfills) {
      causes.push({
        key: `degraded-read:backfill:${wallet.walletId}:${wallet.status}`,
        kind: "degraded-read",
        severity: SEVERITY_OF["degraded-read"],
        title: `History of ${wallet.address} ${wallet.status === "failed" ? "could not be read" : "has gaps"}`,
        detail: wallet.status === "failed"
          ? `The backfill of ${wallet.address} failed: ${wallet.error ?? "chain reads failed past the retry budget"}.`
          : `The backfill of ${wallet.address} ended partial: some dates' multipliers could not be confirmed from ` +
            "chain state (see the wallet's coverageGaps).",
        symbol: "",
        at: wallet.at,
        oneShot: false
      })
    }
    for (const reader of shared.degradedReads) {
      causes.push({
        key: `degraded-read:chain:${reader.chainId}:${reader.reader}:${reader.cause}`,
        kind: "degraded-read",
        severity: SEVERITY_OF["degraded-read"],
        title: `Chain reads failing (${reader.reader}: ${reader.cause.replace("_", " ")})`,
        detail:
          `Since ${reader.since.toISOString()} the ${reader.reader}'s reads of chain ${reader.chainId} fail past ` +
          `the retry budget (${reader.cause}${reader.error === null ? "" : `: ${reader.error}`}). The record ` +
          "is served as stored and catches up once reads work again.",
        symbol: "",
        at: reader.since,
        oneShot: false
      })
    }
    return causes
  })

/** The accounts a pass is for: every account, or those whose own inputs moved. */
export type PassScope = "all" | ReadonlySet<string>

/**
 * Each account's held tokens with the holdings mark they were read under (`Watermark.holdings`). The tokens an
 * account holds change only with its transfers and wallets, and each of those moves that mark, so while it stays the
 * same a pass (the safety pass, one after a shared fact moved, one after a classification or a build of the account)
 * reuses them instead of reading the account's transfers again.
 */
export type HeldCache = Map<string, { readonly mark: string; readonly held: ReadonlyArray<HeldToken> }>

/** Accounts whose facts a pass reads together (a statement per kind of fact for each batch). */
export const PASS_BATCH = 500

/**
 * One pass over the accounts in scope: raise what is new, resolve what ended. The accounts' facts are read a batch
 * at a time, a statement per kind of fact for the whole batch, so a pass costs a few statements per batch besides
 * the alerts it writes, not a few per account. Answers the number raised and the accounts whose causes could not all
 * be read or stored (left as they were, for the next tick to try again: a batch whose facts could not be read, or
 * an account whose sync failed). With `reuse`, held tokens are taken from its cache where the account's holdings
 * mark in `marks` (read before the pass) is the one they were read under, and kept there under it otherwise.
 */
export const monitorPassOf = (
  scope: PassScope,
  reuse?: { readonly marks: ReadonlyMap<string, string>; readonly cache: HeldCache },
  batchSize = PASS_BATCH
) =>
  Effect.gen(function*() {
    const sources = yield* AlertSources
    const store = yield* AlertsStore
    const now = yield* Clock.currentTimeMillis
    let raised = 0
    const failed: Array<string> = []
    const accounts = (yield* sources.accounts).filter((account) => scope === "all" || scope.has(account.id))
    if (accounts.length === 0) return { raised, failed, staleAt: new Map<number, number>() }
    const shared = yield* sharedFacts(accounts.some((account) => account.reportingCurrency !== "USD"))
    const staleAt = nextStaleAt(shared, (yield* WebhookConfig).oracleStaleMinutes)
    for (const batch of Arr.chunksOf(accounts, batchSize)) {
      const ids = batch.map((account) => account.id)
      const knownHeld = new Map<string, ReadonlyArray<HeldToken>>()
      for (const id of ids) {
        const mark = reuse?.marks.get(id)
        const cached = mark === undefined ? undefined : reuse?.cache.get(id)
        if (cached !== undefined && cached.mark === mark) knownHeld.set(id, cached.held)
      }
      // Facts that cannot all be read leave the batch's accounts as they are (nothing resolved on a partial view).
      const facts = yield* Effect.exit(accountFacts(ids, knownHeld))
      if (Exit.isFailure(facts)) {
        for (const id of ids) failed.push(id)
        yield* Effect.logError(`alerts: monitor pass could not read the facts of ${ids.length} account(s)`, facts.cause)
        continue
      }
      for (const account of batch) {
        const own = facts.value.get(account.id)!
        const mark = reuse?.marks.get(account.id)
        if (mark !== undefined) reuse?.cache.set(account.id, { mark, held: own.held })
        yield* Effect.gen(function*() {
          const causes = yield* causesOf(account, now, shared, own)
          const result = yield* store.sync(account.id, causes, new Date(now), own.open)
          raised += result.raised.length
        }).pipe(
          Effect.catchAllCause((cause) => {
            failed.push(account.id)
            return Effect.logError(`alerts: monitor pass failed for account ${account.id}`, cause)
          })
        )
      }
    }
    return { raised, failed, staleAt }
  })

/**
 * Per chain, the earliest instant of its clock at which a feed fresh now turns stale (`oracle-paused`). A feed's
 * silence moves no row: the block whose time crosses it is what causes the alert, so the monitor passes as soon as
 * the chain's newest block reaches it rather than waiting for the safety pass.
 */
export const nextStaleAt = (shared: SharedFacts, staleMinutes: number): ReadonlyMap<number, number> => {
  const earliest = new Map<number, number>()
  for (const round of shared.latestRounds) {
    if (round.chainTime === null || isFeedStale(round.updatedAt, round.chainTime, staleMinutes)) continue
    const at = feedStaleAt(round.updatedAt, staleMinutes)?.getTime()
    if (at === undefined) continue
    const known = earliest.get(round.chainId)
    if (known === undefined || at < known) earliest.set(round.chainId, at)
  }
  return earliest
}

/** One pass over every account; answers the number of alerts raised. */
export const monitorPass = Effect.map(monitorPassOf("all"), (result) => result.raised)

/** What the monitor remembers between ticks: the watermark its passes covered, and when the last full pass ran. */
export interface MonitorState {
  readonly mark: Watermark | undefined
  readonly at: number
  /** Per chain, when by its clock a feed fresh at the last pass turns stale (`nextStaleAt`). */
  readonly staleAt?: ReadonlyMap<number, number> | undefined
}

/**
 * Whether a pass is due, and for which accounts: every account when the shared facts moved (or the watermark could
 * not be read, or `monitorSafetyPollMs` went by since the last full pass); else the accounts whose own inputs moved
 * (none: no pass). Answers the watermark to remember once the pass is done.
 */
export const passDue = (last: MonitorState) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const now = yield* Clock.currentTimeMillis
    const mark = yield* (yield* AlertSources).watermark.pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("alerts: watermark unreadable; full pass", cause), undefined)
      )
    )
    if (
      mark === undefined || last.mark === undefined || mark.shared !== last.mark.shared ||
      now - last.at >= config.monitorSafetyPollMs || (yield* feedTurnedStale(last))
    ) {
      return { due: true, scope: "all" as PassScope, mark, now }
    }
    const moved = new Set<string>()
    for (const [account, accountMark] of mark.accounts) {
      if (last.mark.accounts.get(account) !== accountMark) moved.add(account)
    }
    return { due: moved.size > 0, scope: moved as PassScope, mark, now }
  })

/** Whether a chain's newest block reached the time a feed fresh at the last pass turns stale (an unreadable clock: no). */
const feedTurnedStale = (last: MonitorState) =>
  Effect.gen(function*() {
    if (last.staleAt === undefined || last.staleAt.size === 0) return false
    const staleAt = last.staleAt
    const times = yield* (yield* AlertSources).chainTimes([...staleAt.keys()]).pipe(
      Effect.catchAllCause(() => Effect.succeed(new Map<number, Date>()))
    )
    return [...times].some(([chainId, time]) => time.getTime() >= (staleAt.get(chainId) ?? Infinity))
  })

/** The state after a pass: its watermark, less the accounts that failed (so they are tried again next tick). */
export const afterPass = (
  last: MonitorState,
  due: { readonly scope: PassScope; readonly mark: Watermark | undefined; readonly now: number },
  failed: ReadonlyArray<string>,
  staleAt: ReadonlyMap<number, number> | undefined = last.staleAt
): MonitorState => {
  if (due.mark === undefined) return { mark: undefined, at: 0 }
  const accounts = new Map(due.mark.accounts)
  for (const account of failed) accounts.delete(account)
  return { mark: { ...due.mark, accounts }, at: due.scope === "all" ? due.now : last.at, staleAt }
}

/**
 * The alert monitor: every `ALERT_POLL_MS` (2 s) it reads the record's watermark, two cheap queries; when the facts
 * every account shares moved it passes over every account, when only some accounts' own inputs moved (a transfer, a
 * build, a wallet or setting) it passes over those, and every `ALERT_SAFETY_POLL_MS` over every account, for causes
 * time alone brings. A pass derives each account's causes from what the record holds (multiplier announcements and
 * activations, pauses, the review backlog, the ECB status, backfill outcomes, chain read health) and syncs the alert
 * store, which writes each new alert with its deliveries in one transaction. A quiet record costs the watermark per
 * tick, and a busy one a pass over the accounts that moved (a statement per kind of fact for each batch of them, and
 * the alerts that changed); each account's held tokens are kept between passes (`HeldCache`).
 */
export const runAlertMonitor = Effect.gen(function*() {
  const config = yield* WebhookConfig
  let last: MonitorState = { mark: undefined, at: 0 }
  const cache: HeldCache = new Map()
  for (;;) {
    const due = yield* passDue(last)
    if (due.due) {
      const marks = due.mark?.holdings
      if (marks === undefined) cache.clear()
      else for (const account of cache.keys()) if (!marks.has(account)) cache.delete(account)
      const result = yield* monitorPassOf(due.scope, marks === undefined ? undefined : { marks, cache }).pipe(
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("alerts: monitor pass failed", cause), undefined))
      )
      // A pass that failed as a whole is tried again, in full, on the next tick.
      last = result === undefined
        ? { mark: undefined, at: 0 }
        : afterPass(last, due, result.failed, result.staleAt)
    }
    yield* Effect.sleep(Duration.millis(config.monitorPollMs))
  }
})

export const AlertMonitorLive = Layer.scopedDiscard(Effect.forkScoped(runAlertMonitor))
