export * from "./ClassifierPort.js"
export * from "./EmbeddedModel.js"
export * from "./ModelFeatures.js"
