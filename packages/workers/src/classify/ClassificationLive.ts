import { Layer } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { ViemChainClientLayer } from "../chain/ViemChainClient.js"
import { ClassificationSettings, ClassificationWorkerLayer } from "./ClassificationWorker.js"
import { ClassifierLive } from "./ClassifierLive.js"
import { ContractListLive } from "./ContractListLive.js"

/** Classification over its contract list, classifier and chain client; needs its settings and `ChainConfig`. */
export const ClassificationWorkers = ClassificationWorkerLayer.pipe(
  Layer.provide(Layer.mergeAll(ContractListLive, ClassifierLive, ViemChainClientLayer))
)

/** Classification configured from the environment (`CONTRACT_LIST`, `MODEL_PROVIDER`, the chain's `RPC_URL`). */
export const ClassificationLive = ClassificationWorkers.pipe(
  Layer.provide(Layer.mergeAll(ChainConfig.Live, ClassificationSettings.Live))
)
