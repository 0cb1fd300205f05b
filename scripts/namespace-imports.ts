/**
 * `npx tsx scripts/namespace-imports.ts [--check] [--no-lint] [package ...]`: one import style across the repo.
 *
 * 1. Every import from a package root (`import { LedgerStore } from "@scaledger/db"`) becomes an import from the
 *    module that defines the name (`import { LedgerStore } from "@scaledger/db/ledger/LedgerStore"`), merged into an
 *    import of that module the file already has. A name the root exports as a namespace
 *    (`export * as Database from "./Database.js"`) becomes `import * as Database from "@scaledger/db/Database"`.
 * 2. Then each package's `src/index.ts` exports its modules as namespaces only: `export * from "./X.js"` becomes
 *    `export * as X from "./X.js"` (as `@effect/sql-pg` does); a name two modules share takes its folder as prefix.
 *
 * Idempotent: a second run changes nothing. Re-run it after merging branches that still import package roots or add
 * `export *` lines. Without package names it works on all five; with names (`domain db`) only imports of, and the
 * index of, those. `--check` lists what would change and exits 1 if anything would; `--no-lint` skips the
 * `eslint --fix` (dprint formatting) of the changed files. Names it cannot place are listed and left alone.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"

const ROOT = Path.resolve(import.meta.dirname, "..")

const PACKAGES: Record<string, string> = {
  domain: "packages/domain/src",
  db: "db/src",
  workers: "packages/workers/src",
  server: "packages/server/src",
  mcp: "packages/mcp/src"
}

const SCANNED = ["packages", "db", "test", "demo", "scripts"]

const args = process.argv.slice(2)
const check = args.includes("--check")
const lint = !args.includes("--no-lint")
const picked = args.filter((a) => !a.startsWith("--"))
for (const name of picked) if (!(name in PACKAGES)) throw new Error(`unknown package ${name}`)
const packages = picked.length > 0 ? picked : Object.keys(PACKAGES)

const parse = (file: string) =>
  ts.createSourceFile(file, Fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)

/** `./ledger/LedgerStore.js` next to `from` as an absolute `.ts` path. */
const resolveRelative = (from: string, spec: string): string =>
  Path.resolve(Path.dirname(from), spec.replace(/\.js$/, ".ts"))

interface Origin {
  readonly file: string
  readonly namespace: boolean
}

/** The names a module exports and the file that defines each, following `export *` and `export { x } from`. */
const exportsCache = new Map<string, Map<string, string>>()
const exportsOf = (file: string): Map<string, string> => {
  const cached = exportsCache.get(file)
  if (cached !== undefined) return cached
  const out = new Map<string, string>()
  exportsCache.set(file, out)
  const source = parse(file)
  const hasExport = (node: ts.Node) =>
    ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
  for (const node of source.statements) {
    if (ts.isExportDeclaration(node)) {
      const spec = node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)
        ? node.moduleSpecifier.text
        : undefined
      const target = spec !== undefined && spec.startsWith(".") ? resolveRelative(file, spec) : undefined
      if (node.exportClause === undefined && target !== undefined) {
        for (const [name, at] of exportsOf(target)) if (!out.has(name)) out.set(name, at)
      } else if (node.exportClause !== undefined && ts.isNamespaceExport(node.exportClause)) {
        out.set(node.exportClause.name.text, file)
      } else if (node.exportClause !== undefined && ts.isNamedExports(node.exportClause)) {
        for (const el of node.exportClause.elements) {
          const inner = (el.propertyName ?? el.name).text
          const at = target === undefined ? file : (exportsOf(target).get(inner) ?? target)
          out.set(el.name.text, el.propertyName === undefined ? at : file)
        }
      }
      continue
    }
    if (!hasExport(node)) continue
    if (ts.isVariableStatement(node)) {
      for (const decl of node.declarationList.declarations) {
        if (ts.isIdentifier(decl.name)) out.set(decl.name.text, file)
      }
    } else if (
      (ts.isClassDeclaration(node) || ts.isFunctionDeclaration(node) || ts.isInterfaceDeclaration(node) ||
        ts.isTypeAliasDeclaration(node) || ts.isEnumDeclaration(node) || ts.isModuleDeclaration(node)) &&
      node.name !== undefined && ts.isIdentifier(node.name)
    ) {
      out.set(node.name.text, file)
    }
  }
  return out
}

interface Candidates {
  readonly symbol?: Origin
  readonly namespace?: Origin
}

/**
 * What a package root offers under each name: the symbol a module defines (what a root that exports its modules
 * flat, `export *`, gives), the namespace an `export * as` entry gives, or both.
 */
const rootNames = (pkg: string): Map<string, Candidates> => {
  const index = Path.join(ROOT, PACKAGES[pkg]!, "index.ts")
  const symbols = new Map<string, Origin>()
  const namespaces = new Map<string, Origin>()
  for (const node of parse(index).statements) {
    if (!ts.isExportDeclaration(node) || node.moduleSpecifier === undefined) continue
    if (!ts.isStringLiteral(node.moduleSpecifier)) continue
    const target = resolveRelative(index, node.moduleSpecifier.text)
    if (node.exportClause !== undefined && ts.isNamespaceExport(node.exportClause)) {
      namespaces.set(node.exportClause.name.text, { file: target, namespace: true })
    }
    // A namespace entry's symbols count too: a branch written when the root still exported them flat imports them.
    for (const [name, at] of exportsOf(target)) {
      if (!symbols.has(name)) symbols.set(name, { file: at, namespace: false })
    }
  }
  const out = new Map<string, Candidates>()
  for (const name of new Set([...symbols.keys(), ...namespaces.keys()])) {
    const symbol = symbols.get(name)
    const namespace = namespaces.get(name)
    out.set(name, { ...(symbol === undefined ? {} : { symbol }), ...(namespace === undefined ? {} : { namespace }) })
  }
  return out
}

/**
 * A name that is both a namespace and a symbol (`LedgerStore`: the module and its class) means the namespace when
 * the file uses it as one: `Name.member` only with members the module exports (`Database.layerWith`); otherwise
 * (`LedgerStore.Default`, or no member access at all) the symbol.
 */
const choose = (candidates: Candidates, local: string, text: string): Origin | undefined => {
  if (candidates.symbol === undefined || candidates.namespace === undefined) {
    return candidates.symbol ?? candidates.namespace
  }
  const members = [...text.matchAll(new RegExp(`(?<![\\w.$])${local}\\.([A-Za-z_$][\\w$]*)`, "g"))].map((m) => m[1]!)
  const moduleExports = exportsOf(candidates.namespace.file)
  return members.length > 0 && members.every((m) => moduleExports.has(m)) ? candidates.namespace : candidates.symbol
}

const subpathOf = (pkg: string, file: string): string => {
  const rel = Path.relative(Path.join(ROOT, PACKAGES[pkg]!), file).replace(/\\/g, "/").replace(/\.ts$/, "")
  return `@scaledger/${pkg}/${rel}`
}

const walk = (dir: string, out: Array<string>) => {
  if (!Fs.existsSync(dir)) return out
  for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name.startsWith(".")) continue
    const full = Path.join(dir, entry.name)
    if (entry.isDirectory()) walk(full, out)
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(full)
  }
  return out
}

interface Edit {
  readonly start: number
  readonly end: number
  readonly text: string
}

const applyEdits = (text: string, edits: ReadonlyArray<Edit>) =>
  [...edits].sort((a, b) => b.start - a.start).reduce((t, e) => t.slice(0, e.start) + e.text + t.slice(e.end), text)

const roots = new Map(packages.map((pkg) => [pkg, rootNames(pkg)] as const))
const problems: Array<string> = []

/** Rewrites one file's root imports; returns the new text, or undefined when nothing changes. */
const rewriteImports = (file: string): string | undefined => {
  const text = Fs.readFileSync(file, "utf8")
  if (!/from "@scaledger\/[a-z]+"/.test(text)) return undefined
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const imports = source.statements.filter(ts.isImportDeclaration)
  const edits: Array<Edit> = []
  /** Named imports the file already has, by `specifier|type`, to merge new names into. */
  const existing = new Map<string, ts.ImportDeclaration>()
  for (const decl of imports) {
    const clause = decl.importClause
    if (clause === undefined || clause.name !== undefined || !ts.isStringLiteral(decl.moduleSpecifier)) continue
    if (clause.namedBindings === undefined || !ts.isNamedImports(clause.namedBindings)) continue
    existing.set(`${decl.moduleSpecifier.text}|${clause.isTypeOnly}`, decl)
  }
  const added = new Map<ts.ImportDeclaration, Array<string>>()
  for (const decl of imports) {
    const spec = ts.isStringLiteral(decl.moduleSpecifier) ? decl.moduleSpecifier.text : ""
    const match = /^@scaledger\/([a-z]+)$/.exec(spec)
    const names = match === null ? undefined : roots.get(match[1]!)
    const clause = decl.importClause
    if (match === null || names === undefined || clause === undefined) continue
    const bindings = clause.namedBindings
    if (clause.name !== undefined || bindings === undefined || !ts.isNamedImports(bindings)) {
      problems.push(`${Path.relative(ROOT, file)}: ${decl.getText()} (not a named import: left alone)`)
      continue
    }
    const typeOnly = clause.isTypeOnly
    const groups = new Map<string, Array<string>>()
    const lines: Array<string> = []
    let unplaced = false
    for (const el of bindings.elements) {
      const imported = (el.propertyName ?? el.name).text
      const candidates = names.get(imported)
      const origin = candidates === undefined ? undefined : choose(candidates, el.name.text, text)
      if (origin === undefined) {
        problems.push(`${Path.relative(ROOT, file)}: ${imported} is not exported by ${spec}`)
        unplaced = true
        continue
      }
      const target = subpathOf(match[1]!, origin.file)
      if (origin.namespace) {
        lines.push(`import ${typeOnly || el.isTypeOnly ? "type " : ""}* as ${el.name.text} from "${target}"`)
        continue
      }
      const list = groups.get(target) ?? []
      list.push(el.getText())
      groups.set(target, list)
    }
    if (unplaced) continue
    for (const [target, listed] of groups) {
      // `{ type A, type B }` alone is written `import type { A, B }`.
      const allTypes = !typeOnly && listed.every((s) => s.startsWith("type "))
      const specifiers = allTypes ? listed.map((s) => s.slice("type ".length)) : listed
      const asType = typeOnly || allTypes
      const into = existing.get(`${target}|${asType}`)
      if (into !== undefined) {
        added.set(into, [...(added.get(into) ?? []), ...specifiers])
        continue
      }
      lines.push(`import ${asType ? "type " : ""}{ ${specifiers.join(", ")} } from "${target}"`)
    }
    edits.push({ start: decl.getStart(), end: decl.getEnd(), text: lines.join("\n") })
  }
  for (const [decl, specifiers] of added) {
    const bindings = decl.importClause!.namedBindings as ts.NamedImports
    const all = [...bindings.elements.map((el) => el.getText()), ...specifiers]
    edits.push({ start: bindings.getStart(), end: bindings.getEnd(), text: `{ ${[...new Set(all)].join(", ")} }` })
  }
  if (edits.length === 0) return undefined
  const next = applyEdits(text, edits)
  return next === text ? undefined : next
}

const pascal = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

/** The package's index with every `export * from` as a namespace export; undefined when it already is. */
const rewriteIndex = (pkg: string): string | undefined => {
  const index = Path.join(ROOT, PACKAGES[pkg]!, "index.ts")
  const text = Fs.readFileSync(index, "utf8")
  const source = ts.createSourceFile(index, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const taken = new Set<string>()
  const flat: Array<ts.ExportDeclaration> = []
  for (const node of source.statements) {
    if (!ts.isExportDeclaration(node)) continue
    if (node.exportClause !== undefined && ts.isNamespaceExport(node.exportClause)) {
      taken.add(node.exportClause.name.text)
    } else if (node.exportClause === undefined) flat.push(node)
  }
  const edits: Array<Edit> = []
  for (const node of flat) {
    const spec = (node.moduleSpecifier as ts.StringLiteral).text
    const parts = spec.replace(/\.js$/, "").replace(/^\.\//, "").split("/")
    let name = parts[parts.length - 1]!
    if (name === "index") name = pascal(parts[parts.length - 2] ?? pkg)
    if (taken.has(name)) name = parts.slice(0, -1).map(pascal).join("") + name
    if (taken.has(name)) throw new Error(`${pkg}: two modules would both be exported as ${name}`)
    taken.add(name)
    edits.push({ start: node.getStart(), end: node.getEnd(), text: `export * as ${name} from "${spec}"` })
  }
  return edits.length === 0 ? undefined : applyEdits(text, edits)
}

const changed = new Map<string, string>()
for (const dir of SCANNED) {
  for (const file of walk(Path.join(ROOT, dir), [])) {
    if (file === Path.join(ROOT, "scripts/namespace-imports.ts")) continue
    const next = rewriteImports(file)
    if (next !== undefined) changed.set(file, next)
  }
}
for (const pkg of packages) {
  const index = Path.join(ROOT, PACKAGES[pkg]!, "index.ts")
  if (changed.has(index)) throw new Error(`${index} imports a package root: fix it by hand first`)
  const next = rewriteIndex(pkg)
  if (next !== undefined) changed.set(index, next)
}

for (const problem of problems) console.log(`left alone: ${problem}`)
const files = [...changed.keys()].map((f) => Path.relative(ROOT, f)).sort()
if (check) {
  for (const file of files) console.log(`would change: ${file}`)
  process.exitCode = files.length > 0 ? 1 : 0
} else {
  for (const [file, text] of changed) Fs.writeFileSync(file, text)
  for (const file of files) console.log(`changed: ${file}`)
  if (lint && files.length > 0) {
    const result = spawnSync(Path.join(ROOT, "node_modules/.bin/eslint"), ["--fix", ...files], {
      cwd: ROOT,
      stdio: "inherit"
    })
    if (result.status !== 0) process.exitCode = result.status ?? 1
  }
  console.log(`${files.length} file(s) changed`)
}
