export * from "./ClassifierPort.js"
