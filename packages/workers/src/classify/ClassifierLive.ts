import { ClassifierFromConfigLive } from "./ClassifierProviders.js"

/** The one import point of the model the workers use: the provider chosen by `MODEL_PROVIDER` (default `embedded`). */
export const ClassifierLive = ClassifierFromConfigLive
