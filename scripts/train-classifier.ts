/**
 * `npm run train:classifier`: trains the embedded classifier on the `train` split of
 * packages/workers/assets/classifier/examples.json (scripts/classifierTraining.ts) and writes
 * packages/workers/src/classify/embedded-model.json.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { loadExamples, root, weightsFile } from "./classifierData.js"
import { trainClassifier } from "./classifierTraining.js"

const { examples, sha256 } = loadExamples()
const { heldOut, sizes, temperature, validation, weights } = trainClassifier(examples, sha256)
Fs.mkdirSync(Path.dirname(weightsFile), { recursive: true })
Fs.writeFileSync(weightsFile, JSON.stringify(weights) + "\n")
console.log(
  `trained ${weights.model}/${weights.version}: ${sizes.K} classes, ${sizes.D} features, ${sizes.fit} examples, ` +
    `temperature ${temperature}\n` +
    `validation accuracy ${(validation.accuracy * 100).toFixed(1)} % (${sizes.validation}), ` +
    `held-out accuracy ${(heldOut.accuracy * 100).toFixed(1)} % (${sizes.heldOut})\n` +
    `written to ${Path.relative(root, weightsFile)}`
)
