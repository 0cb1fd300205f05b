import { loadArtifact } from "./artifacts.js"
import { startFaultProxy } from "./faultProxy.js"
import { startTestNode } from "./node.js"
import { startSeededNode, toJson } from "./seed.js"

export type { FaultProxy, Faults } from "./faultProxy.js"
export type { TestNode } from "./node.js"
export type { SeedManifest } from "./seed.js"

/** The local chain, fault proxy and seed, gathered for tests that use them together. */
export const loadHarness = async () => ({ startTestNode, startSeededNode, startFaultProxy, loadArtifact, toJson })
