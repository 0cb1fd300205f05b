import {
  type ClaimedTransfer,
  type ClassificationResult,
  ClassificationStore,
  LEARNED_NOTHING,
  type LearnedPosition,
  type TxFacts,
  type TxLegRow
} from "@scaledger/db/classification/ClassificationStore"
import { ChainClient } from "@scaledger/domain/chain/ChainClient"
import { Classifier, type MovementFeatures } from "@scaledger/domain/classification/ClassifierPort"
import { classifyByRules, type RuleOutcome, type TxLeg, ZERO_ADDRESS } from "@scaledger/domain/classification/Rules"
import { durationSetting, nonNegativeInteger, positiveInteger } from "@scaledger/domain/ConfigValues"
import { Clock, Config, Context, Duration, Effect, Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { ChainConfig } from "../chain/ChainConfig.js"
import { keepingLease } from "../LeaseKeeper.js"
import { ContractList } from "./ContractListLive.js"

export const ClassificationConfig = Config.all({
  poll: durationSetting("CLASSIFY_POLL_MS", "millis", 1_000, { positive: true }),
  /** Transfers leased per round: the rules decide them in milliseconds, and each round asks for ledger builds. */
  batch: positiveInteger("CLASSIFY_BATCH", 1_000),
  /**
   * The most movements of a round handed to the model (each answer may take seconds); a round's other leftovers go
   * back to the queue untried, first in line for the next round.
   */
  modelBatch: positiveInteger("CLASSIFY_MODEL_BATCH", 200),
  leaseSeconds: positiveInteger("CLASSIFY_LEASE_SECONDS", 120),
  /** The longest the worker waits for one model answer; past it the movement stays `unknown`, needing review. */
  modelTimeout: durationSetting("CLASSIFY_MODEL_TIMEOUT_MS", "millis", 30_000, { positive: true }),
  /** How often the chain record is scanned for transfers not queued yet (at once again while a scan finds some). */
  scan: durationSetting("CLASSIFY_SCAN_MS", "millis", 2_000, { positive: true }),
  /** A movement the model could not answer is asked again after this long, up to `modelAttempts` times. */
  modelRetrySeconds: nonNegativeInteger("CLASSIFY_MODEL_RETRY_SECONDS", 300),
  modelAttempts: positiveInteger("CLASSIFY_MODEL_ATTEMPTS", 5)
})
export type ClassificationConfig = Config.Config.Success<typeof ClassificationConfig>

/** The classification worker's settings as a plain record (`WorkersLive.layer` hands it over; `Live` reads them). */
export class ClassificationSettings extends Context.Tag("@scaledger/workers/classify/ClassificationSettings")<
  ClassificationSettings,
  ClassificationConfig
>() {
  static readonly Live = Layer.effect(ClassificationSettings, ClassificationConfig)
}

const WAD = 10n ** 18n

/** Raw (18 decimals) as token units, exactly. */
const units = (raw: string): string => {
  const value = BigInt(raw)
  const whole = value / WAD
  const fraction = (value % WAD).toString().padStart(18, "0").replace(/0+$/, "")
  return fraction === "" ? whole.toString() : `${whole}.${fraction}`
}

/**
 * The classification worker: queues every transfer of the watched addresses, leases a batch, decides each by the
 * rules (reading whether counterparties have code, once per address) and hands the leftovers (an unlisted contract)
 * to the `Classifier`. A model answer is stored `ai_labeled`, needing review; no answer, or a model outage, leaves
 * the movement `unknown`, needing review: ingestion is never held up by the model.
 */
export const makeClassificationWorker = Effect.gen(function*() {
  const store = yield* ClassificationStore
  const chain = yield* ChainClient
  const classifier = yield* Classifier
  const { index: contracts } = yield* ContractList
  const { chainId } = yield* ChainConfig
  const config = yield* ClassificationSettings
  const owner = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

  /**
   * Sender, target and method selector of these transactions: stored ones, the rest read from the node in one batch
   * and stored (a transaction's facts never change, whatever branch it is on). A transaction the node does not know
   * has none (nulls), and is asked again next time. A failed read fails the round: its leases are given back.
   */
  const factsOf = (txHashes: ReadonlyArray<string>) =>
    Effect.gen(function*() {
      const keys = [...new Set(txHashes.map((h) => h.toLowerCase()))]
      const facts = new Map(yield* store.txFacts(chainId, keys))
      const missing = keys.filter((h) => !facts.has(h))
      if (missing.length === 0) return facts
      const read = yield* chain.transactions(missing)
      const fresh = new Map<string, TxFacts>()
      for (const [hash, tx] of read) {
        fresh.set(hash, { from: tx.from.toLowerCase(), to: tx.to?.toLowerCase() ?? null, selector: tx.selector })
      }
      yield* store.storeTxFacts(chainId, fresh)
      for (const [hash, f] of fresh) facts.set(hash, f)
      return facts
    })

  const noFacts: TxFacts = { from: null, to: null, selector: null }

  /** What the model sees of one movement of an own address (the chain's facts and the account's history). */
  const featuresOf = (
    transfer: ClaimedTransfer,
    own: ReadonlySet<string>,
    legs: ReadonlyArray<TxLegRow>,
    counterpartyIsContract: boolean,
    facts: TxFacts
  ) =>
    Effect.gen(function*() {
      const direction = own.has(transfer.fromKey) ? "out" as const : "in" as const
      const wallet = direction === "out" ? transfer.fromKey : transfer.toKey
      const counterparty = direction === "out" ? transfer.toKey : transfer.fromKey
      const history = yield* store.history(transfer.accountId, chainId, counterparty, transfer.block)
      return {
        account: transfer.accountId,
        chainId,
        txHash: transfer.txHash,
        direction,
        token: legs.find((leg) => leg.logIndex === transfer.logIndex)?.token ?? transfer.tokenKey,
        amount: units(transfer.raw),
        wallet,
        counterparty,
        counterpartyIsContract,
        txFrom: facts.from,
        txTo: facts.to,
        methodSelector: facts.selector,
        tokenFlows: legs.flatMap((leg) =>
          own.has(leg.from) || own.has(leg.to)
            ? [{
              token: leg.token,
              direction: own.has(leg.to) ? "in" as const : "out" as const,
              amount: units(leg.raw)
            }]
            : []
        ),
        priorIn: history.priorIn,
        priorOut: history.priorOut,
        confirmedRelationship: history.confirmedRelationship
      } satisfies MovementFeatures
    })

  /**
   * When the chain record was last scanned for new transfers, whether that scan queued any, and its snapshot (the
   * next scan looks only at what was recorded since; none after a start: a full scan).
   */
  const scan: { at: number; found: boolean; since: string | undefined } = {
    at: Number.NEGATIVE_INFINITY,
    found: true,
    since: undefined
  }

  /** Where learning got to: the user confirmations after it are handed to the model on the next round. */
  let learnedUntil: LearnedPosition = LEARNED_NOTHING

  /** Hands the model the account's confirmed labels (every provider may learn; `none` ignores them). */
  const learn = Effect.gen(function*() {
    const confirmed = yield* store.confirmedSince(chainId, learnedUntil, 500)
    if (confirmed.length === 0) return
    const owns = new Map<string, ReadonlySet<string>>()
    for (const accountId of new Set(confirmed.map((c) => c.transfer.accountId))) {
      owns.set(accountId, yield* store.ownAddresses(accountId))
    }
    const legRows = yield* store.legs(
      chainId,
      confirmed.map((c) => c.transfer),
      [...owns.values()].flatMap((own) => [...own])
    )
    const facts = yield* factsOf(confirmed.map((c) => c.transfer.txHash))
    const examples = yield* Effect.forEach(confirmed, (c) =>
      Effect.gen(function*() {
        const own = owns.get(c.transfer.accountId)!
        const counterparty = own.has(c.transfer.fromKey) ? c.transfer.toKey : c.transfer.fromKey
        const code = yield* store.knownCode(chainId, [counterparty])
        const features = yield* featuresOf(
          c.transfer,
          own,
          legRows.filter((leg) => leg.txHash === c.transfer.txHash),
          code.get(counterparty) ?? false,
          facts.get(c.transfer.txHash.toLowerCase()) ?? noFacts
        )
        return { features, type: c.type, relationship: c.relationship }
      }))
    yield* classifier.learn(examples)
    const last = confirmed[confirmed.length - 1]!
    learnedUntil = {
      at: last.at,
      accountId: last.transfer.accountId,
      txHash: last.transfer.txHash,
      logIndex: last.transfer.logIndex
    }
  })

  /** What the rules say of one transfer (pure: the model is asked later, only for the leftovers). */
  const byRules = (
    transfer: ClaimedTransfer,
    own: ReadonlySet<string>,
    legs: ReadonlyArray<TxLegRow>,
    hasCode: ReadonlyMap<string, boolean>
  ) => {
    const txLegs: Array<TxLeg> = legs.map((leg) => ({
      token: leg.token,
      from: leg.from,
      to: leg.to,
      logIndex: leg.logIndex
    }))
    const self: TxLeg = {
      token: legs.find((leg) => leg.logIndex === transfer.logIndex)?.token ?? transfer.tokenKey,
      from: transfer.fromKey,
      to: transfer.toKey,
      logIndex: transfer.logIndex
    }
    return classifyByRules({ own, contracts, hasCode: (a) => hasCode.get(a) ?? false }, self, txLegs)
  }

  const decide = (
    transfer: ClaimedTransfer,
    own: ReadonlySet<string>,
    legs: ReadonlyArray<TxLegRow>,
    outcome: RuleOutcome,
    facts: TxFacts
  ) =>
    Effect.gen(function*() {
      const base = {
        accountId: transfer.accountId,
        chainId,
        txHash: transfer.txHash,
        logIndex: transfer.logIndex
      }
      const none = { model: null, confidence: null, error: null }
      switch (outcome._tag) {
        case "NotOwn":
          return {
            ...base,
            ...none,
            type: null,
            relationship: null,
            classifiedBy: "rule",
            confirmed: false,
            rule: null,
            counterpartyKey: null,
            rationale: null
          } satisfies ClassificationResult
        case "Classified":
          return {
            ...base,
            ...none,
            type: outcome.type,
            relationship: outcome.relationship,
            classifiedBy: "rule",
            confirmed: outcome.confirmed,
            rule: outcome.rule,
            counterpartyKey: own.has(transfer.fromKey) ? transfer.toKey : transfer.fromKey,
            rationale: outcome.rationale
          } satisfies ClassificationResult
        case "Leftover": {
          const features = yield* featuresOf(transfer, own, legs, true, facts)
          const unknown = (rationale: string, error: string | null, model: string | null) =>
            ({
              ...base,
              type: "unknown",
              relationship: null,
              classifiedBy: "rule",
              confirmed: false,
              rule: "unlisted_contract",
              counterpartyKey: outcome.counterparty,
              model,
              confidence: null,
              rationale,
              error
            }) satisfies ClassificationResult
          const answer = yield* classifier.classify(features).pipe(
            Effect.timeoutFail({
              duration: config.modelTimeout,
              onTimeout: () => ({ _tag: "ClassifierUnavailable" as const, model: classifier.name, reason: "timed out" })
            }),
            Effect.either
          )
          if (answer._tag === "Left") {
            yield* Effect.logWarning(`classifier ${answer.left.model} unavailable: ${answer.left.reason}`)
            return unknown(
              "A contract not on the contract list; the model could not answer, so it awaits review.",
              answer.left.reason,
              answer.left.model
            )
          }
          if (Option.isNone(answer.right)) {
            return unknown(
              `A contract not on the contract list; no model label (${classifier.name}), so it awaits review.`,
              null,
              null
            )
          }
          const label = answer.right.value
          return {
            ...base,
            type: label.type,
            relationship: label.relationship,
            classifiedBy: "ai_labeled",
            confirmed: false,
            rule: null,
            counterpartyKey: outcome.counterparty,
            model: label.model,
            confidence: label.confidence,
            rationale: label.rationale,
            error: null
          } satisfies ClassificationResult
        }
      }
    })

  /**
   * One round: queue new transfers, lease a batch, decide it, store the decisions. Returns how many were leased and
   * how many decisions were stored.
   */
  const round = Effect.gen(function*() {
    // Learning is the model's: a confirmation whose transaction cannot be read now (the node out of reach) is tried
    // again next round (its position is not moved on) and holds up none of the rules' decisions meanwhile.
    yield* learn.pipe(
      Effect.catchAll((error) => Effect.logWarning("classification worker: learning failed; tried again", error))
    )
    const now = yield* Clock.currentTimeMillis
    if (scan.found || now - scan.at >= Duration.toMillis(config.scan)) {
      const { queued, since } = yield* store.enqueue(chainId, scan.since)
      scan.found = queued > 0
      scan.since = since
      scan.at = now
      yield* store.retryModelFailures(chainId, config.modelRetrySeconds, config.modelAttempts)
    }
    const claimed = yield* store.claim(chainId, owner, config.batch, config.leaseSeconds)
    if (claimed.length === 0) {
      yield* store.dropOrphans(chainId)
      return { claimed: 0, stored: 0 }
    }
    const stored = yield* Effect.gen(function*() {
      const owns = new Map<string, ReadonlySet<string>>()
      for (const accountId of new Set(claimed.map((c) => c.accountId))) {
        owns.set(accountId, yield* store.ownAddresses(accountId))
      }
      const legRows = yield* store.legs(chainId, claimed, [...owns.values()].flatMap((own) => [...own]))
      const byTx = new Map<string, Array<TxLegRow>>()
      for (const leg of legRows) {
        const list = byTx.get(leg.txHash) ?? []
        list.push(leg)
        byTx.set(leg.txHash, list)
      }
      // Whether counterparties have code: asked only for those neither own, zero nor listed; read once per address.
      const wanted = new Set<string>()
      for (const c of claimed) {
        const own = owns.get(c.accountId)!
        for (const end of [c.fromKey, c.toKey]) {
          if (!own.has(end) && end !== ZERO_ADDRESS && !contracts.has(end)) wanted.add(end)
        }
      }
      const hasCode = new Map(yield* store.knownCode(chainId, [...wanted]))
      const missing = [...wanted].filter((a) => !hasCode.has(a))
      if (missing.length > 0) {
        const read = yield* chain.hasCode(missing)
        yield* store.storeCode(chainId, [...read.entries()])
        for (const [address, code] of read) hasCode.set(address, code)
      }
      const ruled: Array<{ readonly c: ClaimedTransfer; readonly outcome: RuleOutcome }> = []
      const untried: Array<ClaimedTransfer> = []
      let toModel = 0
      for (const c of claimed) {
        const outcome = byRules(c, owns.get(c.accountId)!, byTx.get(c.txHash) ?? [], hasCode)
        if (outcome._tag !== "Leftover") ruled.push({ c, outcome })
        else if (toModel++ < config.modelBatch) ruled.push({ c, outcome })
        else untried.push(c)
      }
      if (untried.length > 0) yield* store.giveBack(owner, untried)
      const decideAll = (
        items: ReadonlyArray<{ readonly c: ClaimedTransfer; readonly outcome: RuleOutcome }>,
        facts: ReadonlyMap<string, TxFacts>,
        concurrency = 4
      ) =>
        Effect.forEach(
          items,
          ({ c, outcome }) =>
            decide(
              c,
              owns.get(c.accountId)!,
              byTx.get(c.txHash) ?? [],
              outcome,
              facts.get(c.txHash.toLowerCase()) ?? noFacts
            ),
          { concurrency }
        )
      // The rules' decisions are stored first: a slow or hanging model (up to CLASSIFY_MODEL_TIMEOUT_MS an answer)
      // holds up only the movements it is asked about, not the round's others nor the ledger builds behind them.
      const byModel = ruled.filter(({ outcome }) => outcome._tag === "Leftover")
      const byRule = yield* store.complete(
        owner,
        yield* decideAll(ruled.filter(({ outcome }) => outcome._tag !== "Leftover"), new Map())
      )
      if (byModel.length === 0) return byRule
      // The transactions' own facts only for what goes to the model, read in one batch. The answers may take longer
      // than the lease: it is extended meanwhile, or another worker would take the movements over and this round's
      // answers would be written nowhere (and that worker's, should its wait be as long, neither).
      const answered = yield* factsOf(byModel.map(({ c }) => c.txHash)).pipe(
        // As many at once as the model answers at once: a movement queued inside it would spend its
        // CLASSIFY_MODEL_TIMEOUT_MS waiting for the others.
        Effect.flatMap((facts) => decideAll(byModel, facts, classifier.concurrency ?? 4)),
        keepingLease(
          "classification worker",
          Duration.seconds(config.leaseSeconds),
          store.renew(owner, byModel.map(({ c }) => c), config.leaseSeconds)
        )
      )
      return byRule + (yield* store.complete(owner, answered))
    }).pipe(Effect.tapErrorCause(() => Effect.ignore(store.release(owner, claimed))))
    return { claimed: claimed.length, stored }
  })

  /** One round; returns how many decisions were stored. */
  const poll = Effect.map(round, (done) => done.stored)

  // A full batch means more are waiting: the next round starts at once, not after the poll interval.
  const run = round.pipe(
    Effect.catchAllCause((cause) =>
      Effect.as(Effect.logWarning("classification worker: poll failed", cause), { claimed: 0, stored: 0 })
    ),
    Effect.flatMap((done) => done.claimed >= config.batch ? Effect.yieldNow() : Effect.sleep(config.poll)),
    Effect.forever
  )
  return { run, poll, owner } as const
})

/** The worker as a fiber of the layer's scope; needs the chain client, the contract list and a `Classifier`. */
export const ClassificationWorkerLayer = Layer.scopedDiscard(
  Effect.flatMap(makeClassificationWorker, (worker) => Effect.forkScoped(worker.run))
).pipe(Layer.provide(ClassificationStore.Default))

/** `ClassificationWorkerLayer` with its settings read from the environment (tests, embedders). */
export const ClassificationWorkerLive = ClassificationWorkerLayer.pipe(Layer.provide(ClassificationSettings.Live))
