import { Layer } from "effect"
import { ChainConfig } from "../chain/ChainConfig.js"
import { ViemChainClientLayer } from "../chain/ViemChainClient.js"
import { ClassificationWorkerLive } from "./ClassificationWorker.js"
import { ClassifierLive } from "./ClassifierLive.js"
import { ContractListLive } from "./ContractListLive.js"

/** Classification configured from the environment (`CONTRACT_LIST`, `MODEL_PROVIDER`, the chain's `RPC_URL`). */
export const ClassificationLive = ClassificationWorkerLive.pipe(
  Layer.provide(Layer.mergeAll(ContractListLive, ClassifierLive, ViemChainClientLayer)),
  Layer.provide(ChainConfig.Live)
)
