export * from "./ClassifierPort.js"
export * from "./ContractList.js"
export * from "./Rules.js"
