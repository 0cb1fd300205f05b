import { AlertSources, type ChangeFact } from "@scaledger/db/alerts/AlertSources"
import { type AlertCause, AlertsStore } from "@scaledger/db/alerts/AlertsStore"
import { FxRates } from "@scaledger/db/FxRates"
import { SEVERITY_OF } from "@scaledger/domain/alerts/Alert"
import { isFeedStale } from "@scaledger/domain/alerts/OracleStaleness"
import { Clock, Duration, Effect, Layer } from "effect"
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
      latestRounds: yield* sources.latestRounds,
      oraclePausedTokens: yield* sources.oraclePausedTokens,
      degradedReads: yield* sources.degradedReads,
      fx: needFx ? yield* (yield* FxRates).status() : undefined
    }
  })

export type SharedFacts = Effect.Effect.Success<ReturnType<typeof sharedFacts>>

/** Every cause the record shows for one account right now (DECISIONS.md "Alerts"). */
export const causesOf = (
  account: { readonly id: string; readonly reportingCurrency: string },
  now: number,
  given?: SharedFacts
) =>
  Effect.gen(function*() {
    const sources = yield* AlertSources
    const config = yield* WebhookConfig
    const shared = given ?? (yield* sharedFacts(account.reportingCurrency !== "USD"))
    const causes: Array<AlertCause> = []
    const held = yield* sources.held(account.id)
    const heldKeys = new Set(held.map((token) => `${token.chainId}:${token.tokenKey}`))

    for (const change of yield* sources.pendingChanges(account.id)) {
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

    for (const step of yield* sources.recentDividendSteps(account.id, config.incomeOpenDays)) {
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

    // One pause, one cause: named by its first fact, a Paused event or (no event shows it) a `paused()` read.
    for (const pause of shared.pausedTokens) {
      if (!heldKeys.has(`${pause.chainId}:${pause.tokenKey}`)) continue
      const symbol = symbolOf(pause)
      const fromEvent = pause.txHash !== null
      causes.push({
        key: fromEvent
          ? `token-paused:${pause.chainId}:${pause.tokenKey}:${pause.txHash}:${pause.logIndex}`
          : `token-paused:${pause.chainId}:${pause.tokenKey}:read:${pause.block}`,
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
        oneShot: false
      })
    }

    // A held token's feed silent for ORACLE_STALE_MINUTES of regular US session time, or its oracle paused on chain.
    for (const round of shared.latestRounds) {
      if (!heldKeys.has(`${round.chainId}:${round.tokenKey}`)) continue
      if (!isFeedStale(round.updatedAt, new Date(now), config.oracleStaleMinutes)) continue
      const symbol = symbolOf(round)
      causes.push({
        key: `oracle-paused:${round.chainId}:${round.tokenKey}:${round.updatedAt.getTime()}`,
        kind: "oracle-paused",
        severity: SEVERITY_OF["oracle-paused"],
        title: `${symbol}: price feed silent`,
        detail: `${symbol}'s price feed has given no new round since ${round.updatedAt.toISOString()}, ` +
          `${config.oracleStaleMinutes} minutes or more of regular US session time; its price is stale.`,
        symbol,
        at: new Date(now),
        oneShot: false
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
        oneShot: false
      })
    }

    const backlog = yield* sources.reviewBacklog(account.id)
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
        causes.push({
          key: `stale-reference:${status.newestDay ?? "none"}`,
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

    for (const wallet of yield* sources.degradedBackfills(account.id)) {
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

/** One pass over every account: raise what is new, resolve what ended. */
export const monitorPass = Effect.gen(function*() {
  const sources = yield* AlertSources
  const store = yield* AlertsStore
  const now = yield* Clock.currentTimeMillis
  let raised = 0
  const accounts = yield* sources.accounts
  const shared = yield* sharedFacts(accounts.some((account) => account.reportingCurrency !== "USD"))
  for (const account of accounts) {
    // An account whose causes cannot all be read is left as it is (nothing resolved on a partial view), and the
    // others still get their pass.
    yield* Effect.gen(function*() {
      const causes = yield* causesOf(account, now, shared)
      const result = yield* store.sync(account.id, causes, new Date(now))
      raised += result.raised.length
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logError(`alerts: monitor pass failed for account ${account.id}`, cause))
    )
  }
  return raised
})

/**
 * Whether a full pass is due: the record's watermark moved since the last pass, or `monitorSafetyPollMs` went by.
 * Answers the watermark to remember once the pass is done.
 */
export const passDue = (last: { readonly mark: string | undefined; readonly at: number }) =>
  Effect.gen(function*() {
    const config = yield* WebhookConfig
    const now = yield* Clock.currentTimeMillis
    const mark = yield* (yield* AlertSources).watermark.pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("alerts: watermark unreadable; full pass", cause), undefined)
      )
    )
    const due = mark === undefined || mark !== last.mark || now - last.at >= config.monitorSafetyPollMs
    return { due, mark, now }
  })

/**
 * The alert monitor: every `ALERT_POLL_MS` (2 s) it reads the record's watermark, one cheap query; when it moved
 * (or every `ALERT_SAFETY_POLL_MS`, for causes time alone brings) it derives each account's causes from what the
 * record holds (multiplier announcements and activations, pauses, the review backlog, the ECB status, backfill
 * outcomes, chain read health) and syncs the alert store, which writes each new alert with its deliveries in one
 * transaction. A quiet record costs one query per tick, whatever the number of accounts.
 */
export const runAlertMonitor = Effect.gen(function*() {
  const config = yield* WebhookConfig
  let last: { mark: string | undefined; at: number } = { mark: undefined, at: 0 }
  for (;;) {
    const { due, mark, now } = yield* passDue(last)
    if (due) {
      const ok = yield* monitorPass.pipe(
        Effect.as(true),
        Effect.catchAllCause((cause) => Effect.as(Effect.logError("alerts: monitor pass failed", cause), false))
      )
      // A failed pass is tried again on the next tick.
      last = ok && mark !== undefined ? { mark, at: now } : { mark: undefined, at: 0 }
    }
    yield* Effect.sleep(Duration.millis(config.monitorPollMs))
  }
})

export const AlertMonitorLive = Layer.scopedDiscard(Effect.forkScoped(runAlertMonitor))
