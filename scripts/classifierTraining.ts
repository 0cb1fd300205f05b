/**
 * Trains the embedded classifier (see train-classifier.ts). Multinomial logistic regression with L2, full-batch
 * Adam from zero weights over a fixed number of steps, then a softmax temperature fitted on a validation slice of
 * the training split (every sixth example). No randomness: the same examples give the same weights, byte for byte.
 */
import * as Classification from "@scaledger/domain/classification/index"
import { classKey, evaluate, type Example } from "./classifierData.js"

const MODEL = "scaledger-embedded"
const VERSION = "1.0.0"
const STEPS = 600
const LEARNING_RATE = 0.05
const L2 = 1e-3
const MIN_CONFIDENCE = 0.5

export const trainClassifier = (examples: ReadonlyArray<Example>, sha256: string) => {
  const training = examples.filter((e) => e.split === "train")
  const heldOut = examples.filter((e) => e.split === "heldout")
  const validation = training.filter((_, i) => i % 6 === 5)
  const fit = training.filter((_, i) => i % 6 !== 5)

  const functionName = (signature: string) => signature.slice(0, signature.indexOf("("))
  // The vocabulary: selectors of known functions seen at least MIN_SELECTOR_COUNT times; the rest are "unseen".
  const MIN_SELECTOR_COUNT = 3
  const selectorCounts = new Map<string, { name: string; count: number }>()
  for (const e of fit) {
    const s = Classification.normaliseSelector(e.features.methodSelector)
    if (s === null || e.signature === "unknown") continue
    const entry = selectorCounts.get(s) ?? { name: functionName(e.signature), count: 0 }
    selectorCounts.set(s, { ...entry, count: entry.count + 1 })
  }
  const selectors: Record<string, string> = Object.fromEntries(
    [...selectorCounts.entries()].filter(([, e]) => e.count >= MIN_SELECTOR_COUNT).sort(([a], [b]) =>
      a.localeCompare(b)
    )
      .map(([s, e]) => [s, e.name])
  )
  const knownSelectors = new Set(Object.keys(selectors))

  const classes: Array<Classification.ModelClass> = []
  for (const e of training) {
    if (!classes.some((c) => classKey(c) === classKey(e.label))) classes.push(e.label)
  }
  classes.sort((a, b) => classKey(a).localeCompare(classKey(b)))

  const features = [...new Set(fit.flatMap((e) => Classification.activeFeatures(e.features, knownSelectors)))].sort()
  const featureIndex = new Map(features.map((name, i) => [name, i]))
  const encode = (e: Example) => ({
    x: Classification.activeFeatures(e.features, knownSelectors).flatMap((name) => {
      const i = featureIndex.get(name)
      return i === undefined ? [] : [i]
    }),
    y: classes.findIndex((c) => classKey(c) === classKey(e.label))
  })
  const rows = fit.map(encode)

  const K = classes.length
  const D = features.length
  const W = Array.from({ length: K }, () => new Array<number>(D).fill(0))
  const m = Array.from({ length: K }, () => new Array<number>(D).fill(0))
  const v = Array.from({ length: K }, () => new Array<number>(D).fill(0))
  const beta1 = 0.9
  const beta2 = 0.999
  for (let step = 1; step <= STEPS; step++) {
    const grad = Array.from({ length: K }, (_, k) => W[k].map((w) => L2 * w))
    for (const row of rows) {
      const p = Classification.softmax(Classification.logitsOf(W, row.x))
      for (let k = 0; k < K; k++) {
        const g = (p[k] - (k === row.y ? 1 : 0)) / rows.length
        for (const i of row.x) grad[k][i] += g
      }
    }
    for (let k = 0; k < K; k++) {
      for (let i = 0; i < D; i++) {
        m[k][i] = beta1 * m[k][i] + (1 - beta1) * grad[k][i]
        v[k][i] = beta2 * v[k][i] + (1 - beta2) * grad[k][i] ** 2
        const mHat = m[k][i] / (1 - beta1 ** step)
        const vHat = v[k][i] / (1 - beta2 ** step)
        W[k][i] -= (LEARNING_RATE * mHat) / (Math.sqrt(vHat) + 1e-8)
      }
    }
  }

  const round = (x: number) => Math.round(x * 1e6) / 1e6
  const weightsAt = (temperature: number): Classification.EmbeddedWeights => ({
    model: MODEL,
    version: VERSION,
    classes: classes as unknown as Classification.EmbeddedWeights["classes"],
    selectors,
    features,
    weights: W.map((row) => row.map(round)),
    temperature,
    training: { examples: fit.length, dataSha256: sha256, validationAccuracy: 0, heldOutAccuracy: 0 }
  })

  // Temperature: the value on a fixed grid with the least negative log-likelihood on the validation slice, taken
  // twice: as it is and with its selectors unknown, so that confidence also holds for protocols never seen.
  const calibration = [
    ...validation,
    ...validation.map((e) => ({ ...e, features: { ...e.features, methodSelector: "0x00000000" } }))
  ]
  const nll = (temperature: number) => {
    const model = Classification.loadModel(weightsAt(temperature))
    return calibration.reduce((sum, e) => {
      const p = Classification.predictProba(model, e.features)
      return sum - Math.log(Math.max(1e-12, p[encode(e).y]))
    }, 0)
  }
  let temperature = 1
  let best = Infinity
  for (let t = 0.25; t <= 4.0001; t += 0.05) {
    const value = nll(round(t))
    if (value < best) {
      best = value
      temperature = round(t)
    }
  }

  const model = Classification.loadModel(weightsAt(temperature))
  const onValidation = evaluate(model, validation, MIN_CONFIDENCE)
  const onHeldOut = evaluate(model, heldOut, MIN_CONFIDENCE)
  const out: Classification.EmbeddedWeights = {
    ...model.weights,
    training: {
      examples: fit.length,
      dataSha256: sha256,
      validationAccuracy: round(onValidation.accuracy),
      heldOutAccuracy: round(onHeldOut.accuracy)
    }
  }
  return {
    weights: out,
    temperature,
    validation: onValidation,
    heldOut: onHeldOut,
    sizes: { K, D, fit: fit.length, validation: validation.length, heldOut: heldOut.length }
  }
}
