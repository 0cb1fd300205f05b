import { Layer } from "effect"

/**
 * Every background worker, each a fiber owned by this layer's scope: releasing the layer (shutdown) interrupts
 * them. Workers keep their progress in tables, so a restart resumes where they stopped.
 */
export const WorkersLive = Layer.mergeAll(Layer.empty)
