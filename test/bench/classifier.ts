/**
 * `npm run bench:classifier`: the embedded model on the held-out examples of
 * packages/workers/assets/classifier/examples.json (accuracy overall, per class, on protocols it saw in training and
 * on protocols it never saw; calibration), and how many labels per second it gives on one core.
 */
import * as Classification from "@scaledger/domain/classification/index"
import { Option } from "effect"
import { evaluate, loadExamples, loadWeights } from "../../scripts/classifierData.js"

const MIN_CONFIDENCE = 0.5
const model = Classification.loadModel(loadWeights())
const { examples } = loadExamples()
const heldOut = examples.filter((e) => e.split === "heldout")
const seenSources = new Set(examples.filter((e) => e.split === "train").map((e) => e.source))
const pct = (x: number) => `${(x * 100).toFixed(1)} %`

const report = (title: string, set: typeof heldOut) => {
  const r = evaluate(model, set, MIN_CONFIDENCE)
  console.log(
    `${title}: ${r.n} examples, accuracy ${pct(r.accuracy)}; answered at confidence >= ${MIN_CONFIDENCE}: ` +
      `${pct(r.coverage)} of them, ${pct(r.answeredAccuracy)} correct; calibration error (ECE) ${r.ece.toFixed(3)}`
  )
  return r
}

console.log(`model ${model.weights.model}/${model.weights.version}, ${model.weights.features.length} features`)
const all = report("held out, all", heldOut)
report("held out, protocols seen in training", heldOut.filter((e) => seenSources.has(e.source)))
report("held out, protocols never seen", heldOut.filter((e) => !seenSources.has(e.source)))
console.log("per class (held out, all):")
for (const c of all.perClass) console.log(`  ${c.label.padEnd(32)} ${String(c.n).padStart(4)}  ${pct(c.accuracy)}`)

const features = heldOut.map((e) => e.features)
const memory: Classification.CounterpartyMemory = new Map()
let labelled = 0
const warm = () => {
  for (const f of features) if (Option.isSome(Classification.classifyWith(model, memory, f, MIN_CONFIDENCE))) labelled++
}
warm()
const rounds = 50
const start = process.hrtime.bigint()
for (let i = 0; i < rounds; i++) warm()
const seconds = Number(process.hrtime.bigint() - start) / 1e9
console.log(
  `throughput: ${Math.round((rounds * features.length) / seconds).toLocaleString("en-US")} labels/s ` +
    `(${rounds * features.length} classifications in ${seconds.toFixed(2)} s, rationale included, one core; ` +
    `${Math.round((labelled / ((rounds + 1) * features.length)) * 100)} % answered)`
)
