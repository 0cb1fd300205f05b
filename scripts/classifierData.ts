/**
 * The embedded classifier's labelled examples (packages/workers/assets/classifier/examples.json) and how a model is
 * scored on them; shared by the training script, the benchmark and the tests.
 */
import * as Classification from "@scaledger/domain/classification/index"
import { Schema } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"

export const root = Path.resolve(import.meta.dirname, "..")
export const examplesFile = Path.join(root, "packages", "workers", "assets", "classifier", "examples.json")
export const weightsFile = Path.join(root, "packages", "workers", "src", "classify", "embedded-model.json")

export const Example = Schema.Struct({
  id: Schema.String,
  source: Schema.String,
  signature: Schema.String,
  split: Schema.Literal("train", "heldout"),
  label: Classification.ModelClass,
  features: Classification.MovementFeatures
})
export type Example = typeof Example.Type

const ExamplesFile = Schema.Struct({ seed: Schema.Number, examples: Schema.Array(Example) })

export const loadExamples = (): { readonly examples: ReadonlyArray<Example>; readonly sha256: string } => {
  const text = Fs.readFileSync(examplesFile, "utf8")
  const decoded = Schema.decodeUnknownSync(ExamplesFile)(JSON.parse(text))
  return { examples: decoded.examples, sha256: createHash("sha256").update(text).digest("hex") }
}

export const loadWeights = (): Classification.EmbeddedWeights =>
  Schema.decodeUnknownSync(Classification.EmbeddedWeights)(JSON.parse(Fs.readFileSync(weightsFile, "utf8")))

export const classKey = (c: { readonly type: string; readonly relationship: string | null }) =>
  `${c.type}/${c.relationship}`

export interface Evaluation {
  readonly n: number
  /** Top answer equals the label (whatever its confidence). */
  readonly accuracy: number
  /** Share answered at or above the floor, and the accuracy of those answers. */
  readonly coverage: number
  readonly answeredAccuracy: number
  /** Expected calibration error over 10 confidence bins. */
  readonly ece: number
  readonly perClass: ReadonlyArray<{ readonly label: string; readonly n: number; readonly accuracy: number }>
}

export const evaluate = (
  model: Classification.LoadedModel,
  examples: ReadonlyArray<Example>,
  minConfidence: number
): Evaluation => {
  const bins = Array.from({ length: 10 }, () => ({ n: 0, conf: 0, correct: 0 }))
  const perClass = new Map<string, { n: number; correct: number }>()
  let correct = 0
  let answered = 0
  let answeredCorrect = 0
  for (const example of examples) {
    const [best] = Classification.score(model, new Map(), example.features)
    const ok = classKey(best) === classKey(example.label)
    const entry = perClass.get(classKey(example.label)) ?? { n: 0, correct: 0 }
    entry.n++
    if (ok) {
      correct++
      entry.correct++
    }
    perClass.set(classKey(example.label), entry)
    if (best.p >= minConfidence) {
      answered++
      if (ok) answeredCorrect++
    }
    const bin = bins[Math.min(9, Math.floor(best.p * 10))]
    bin.n++
    bin.conf += best.p
    bin.correct += ok ? 1 : 0
  }
  const n = examples.length
  return {
    n,
    accuracy: correct / n,
    coverage: answered / n,
    answeredAccuracy: answered === 0 ? 0 : answeredCorrect / answered,
    ece: bins.reduce((sum, b) => b.n === 0 ? sum : sum + (b.n / n) * Math.abs(b.conf / b.n - b.correct / b.n), 0),
    perClass: [...perClass.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, e]) => ({ label, n: e.n, accuracy: e.correct / e.n }))
  }
}
