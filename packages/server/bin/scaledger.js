#!/usr/bin/env node
// Runs the TypeScript CLI directly: the packages ship their sources and tsx compiles them on load.
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
