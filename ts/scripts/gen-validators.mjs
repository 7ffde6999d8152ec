#!/usr/bin/env node
/**
 * `node scripts/gen-validators.mjs [DIR...]`: compiles every JSON Schema under the
 * repository's `schemas/` ahead of time with ajv's standalone code generation, so no process
 * compiles schemas at run time (that cost ~0.6 CPU-s per process). Writes, in each DIR
 * (default src/core), `validators.generated.js` (an ES module) and its declarations
 * `validators.generated.d.ts`. The module exports one validator per schema document and per
 * `$defs` entry (`v0`, `v1`, ...), `VALIDATORS` (ref -> validator; refs
 * `https://threads-cases.dev/schemas/<name>` and `...<name>#/$defs/<def>`), `DEFINITIONS`
 * (name -> its `$defs` names) and `SCHEMAS_DIGEST` ({@link schemasDigest} of the files it was
 * generated from; test/validators.test.ts fails when it no longer matches `schemas/`).
 *
 * JavaScript beside a declaration file rather than TypeScript: tsc type-checks every file it
 * emits, even under `// @ts-nocheck`, and on ~1 MB of generated code that more than doubled
 * the build (10 -> 25 CPU-s). So tsc only reads the declarations, `npm run build` writes the
 * module into both src/core (for esbuild) and dist/src/core (for Node), before tsc, and
 * scripts/bundle.mjs writes it into src/core before esbuild (the wheel is built from the
 * sdist, which does not carry it). Generated, never committed (.gitignore). The output is
 * deterministic (the same schema files give the same bytes) and a file is only rewritten
 * when its bytes change.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ts = dirname(dirname(fileURLToPath(import.meta.url)));
export const BASE = "https://threads-cases.dev/schemas/";
/** Where the generated module goes by default: beside src/core/schemas.ts, which imports it. */
export const DEFAULT_DIR = join(ts, "src", "core");
export const MODULE = "validators.generated.js";
export const DECLARATIONS = "validators.generated.d.ts";
/** The repository's `schemas/` folder (in a checkout and in the sdist: beside ts/). */
export const SCHEMAS = join(dirname(ts), "schemas");

/** Every `*.schema.json` under `dir`, as sorted '/'-separated paths relative to `dir`. */
export function schemaFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".schema.json")) out.push(relative(dir, path).split(sep).join("/"));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The sha256 of the schema files under `dir`: over each file in sorted order, its relative
 * path, a newline, the sha256 of its bytes and a newline.
 */
export function schemasDigest(dir = SCHEMAS) {
  const h = createHash("sha256");
  for (const rel of schemaFiles(dir)) {
    h.update(`${rel}\n${createHash("sha256").update(readFileSync(join(dir, rel))).digest("hex")}\n`);
  }
  return h.digest("hex");
}

/** The generated module's text for the schemas under `dir`. */
export async function generate(dir = SCHEMAS) {
  if (!existsSync(dir)) throw new Error(`gen-validators: ${dir} is missing`);
  // imported here, so that importing this script for schemasDigest (the staleness test) is cheap
  const { Ajv2020 } = await import("ajv/dist/2020.js");
  const { default: standaloneCode } = await import("ajv/dist/standalone/index.js");
  // the options of src/core/schemas.ts before precompilation: strict: false because the
  // schemas use `if` blocks and union types that ajv's strict mode flags although they are
  // valid 2020-12; allErrors so a refusal can name the deepest problem. `format` is an
  // annotation here (no format validators are added, as before), so ajv's "unknown format
  // ignored" warnings are dropped; every other warning is printed.
  const logger = {
    log: console.log,
    warn: (...args) => {
      if (!/^unknown format ".*" ignored/.test(String(args[0]))) console.warn(...args);
    },
    error: console.error,
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger, code: { source: true, esm: true, lines: true } });
  const refs = [];
  const definitions = {};
  for (const rel of schemaFiles(dir)) {
    const doc = JSON.parse(readFileSync(join(dir, rel), "utf8"));
    const id = typeof doc["$id"] === "string" ? doc["$id"] : BASE + rel;
    ajv.addSchema(doc, typeof doc["$id"] === "string" ? undefined : id);
    refs.push(id);
    const defs = doc["$defs"];
    const names = typeof defs === "object" && defs !== null && !Array.isArray(defs) ? Object.keys(defs).sort() : [];
    definitions[id.startsWith(BASE) ? id.slice(BASE.length) : id] = names;
    for (const def of names) refs.push(`${id}#/$defs/${def}`);
  }
  const exportNames = {};
  refs.forEach((ref, i) => (exportNames[`v${i}`] = ref));
  let code = standaloneCode(ajv, exportNames);
  // ajv's standalone output requires its runtime helpers even in esm mode; Node runs this
  // file as an ES module, so turn each require into an import (with the .js extension that
  // ESM resolution of a package subpath needs; esbuild bundles it the same way)
  const imports = new Map();
  code = code.replace(/require\("(ajv\/dist\/runtime\/[a-z0-9_]+)"\)\.default/g, (_, mod) => {
    if (!imports.has(mod)) imports.set(mod, `runtime_${mod.split("/").pop()}`);
    return `${imports.get(mod)}.default`;
  });
  if (/\brequire\(/.test(code)) throw new Error("gen-validators: ajv's standalone code still has a require()");
  code = code.replace(/^"use strict";\n?/, "");
  const exported = code.match(/^export const v\d+ = validate\d+;$/gm) ?? [];
  if (exported.length !== refs.length) {
    throw new Error(`gen-validators: ${exported.length} exports for ${refs.length} refs`);
  }
  const digest = schemasDigest(dir);
  const header = [
    "// GENERATED by scripts/gen-validators.mjs from schemas/ (npm run build, scripts/bundle.mjs): do not edit, not committed.",
    "// ajv standalone validators (Ajv2020, strict: false, allErrors: true) for every schema and $defs entry.",
  ];
  const module = [
    ...header,
    ...[...imports].map(([mod, name]) => `import ${name} from "${mod}.js";`),
    `export const SCHEMAS_DIGEST = ${JSON.stringify(digest)};`,
    `export const DEFINITIONS = ${JSON.stringify(definitions, null, 2)};`,
    code.trimEnd(),
    // after the code: the exported consts it refers to are not initialised before it
    "export const VALIDATORS = {",
    ...refs.map((ref, i) => `  ${JSON.stringify(ref)}: v${i},`),
    "};",
    "",
  ];
  const declarations = [
    ...header,
    'import type { ValidateFunction } from "ajv/dist/2020.js";',
    "/** The sha256 of the schema files this module was generated from (schemasDigest). */",
    "export declare const SCHEMAS_DIGEST: string;",
    "/** The `$defs` names of each schema, by its name under schemas/. */",
    "export declare const DEFINITIONS: Readonly<Record<string, readonly string[]>>;",
    "/** The validator of each schema and `$defs` entry, by ref. */",
    "export declare const VALIDATORS: Readonly<Record<string, ValidateFunction>>;",
    "/** The same validators one by one, in the order of VALIDATORS. */",
    ...refs.map((_, i) => `export declare const v${i}: ValidateFunction;`),
    "",
  ];
  return { module: module.join("\n"), declarations: declarations.join("\n") };
}

function writeChanged(path, text) {
  if (existsSync(path) && readFileSync(path, "utf8") === text) return;
  writeFileSync(path, text);
}

/** Writes the generated module and its declarations into each of `outDirs`. */
export async function writeValidators(outDirs = [DEFAULT_DIR], dir = SCHEMAS) {
  const { module, declarations } = await generate(dir);
  for (const out of outDirs) {
    mkdirSync(out, { recursive: true });
    writeChanged(join(out, MODULE), module);
    writeChanged(join(out, DECLARATIONS), declarations);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const dirs = process.argv.slice(2).map((d) => resolve(d));
  await writeValidators(dirs.length > 0 ? dirs : [DEFAULT_DIR]);
}
