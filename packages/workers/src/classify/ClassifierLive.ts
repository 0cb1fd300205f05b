import { ClassifierNone } from "./ClassifierNone.js"

/** The one import point of the model the workers use (the provider chosen by `MODEL_PROVIDER`). */
export const ClassifierLive = ClassifierNone
