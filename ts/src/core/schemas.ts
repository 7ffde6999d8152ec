/**
 * JSON Schema validation against the shared `schemas/` documents (JSON Schema 2020-12).
 * The validators are precompiled at build time, not at run time: scripts/gen-validators.mjs
 * compiles every `schemas/**\/*.schema.json` with ajv (Ajv2020, `strict: false`,
 * `allErrors: true`; cross-file `$ref`s resolved by `$id`) into standalone code,
 * src/core/validators.generated.js (with its .d.ts). `npm run build` regenerates it before tsc
 * (into src/core and dist/src/core) and scripts/bundle.mjs before esbuild;
 * test/validators.test.ts fails when it is older than `schemas/`. {@link validator} returns
 * the validator of a document or of one of its `$defs` entries: no ajv instance is made and
 * nothing is compiled in the process.
 */

import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";

import { DEFINITIONS, VALIDATORS } from "./validators.generated.js";

export const BASE = "https://threads-cases.dev/schemas/";

/** A validator for `schemas/<name>`, or for its `$defs/<definition>` entry. */
export function validator(name: string, definition?: string): ValidateFunction {
  const ref = definition === undefined ? BASE + name : `${BASE}${name}#/$defs/${definition}`;
  const fn = Object.hasOwn(VALIDATORS, ref) ? VALIDATORS[ref] : undefined;
  if (fn === undefined) throw new Error(`no schema ${ref}`);
  return fn;
}

/** Whether `schemas/<name>` has `$defs/<definition>`. */
export function hasDefinition(name: string, definition: string): boolean {
  const defs = Object.hasOwn(DEFINITIONS, name) ? DEFINITIONS[name] : undefined;
  return defs !== undefined && defs.includes(definition);
}

export interface SchemaProblem {
  pointer: string;
  message: string;
}

/**
 * Every schema violation of `value` as `{pointer, message}`, deepest pointer first (the most
 * useful one for `oneOf`/`anyOf` failures), then by pointer; empty when `value` is valid.
 * `prefix` is prepended to each pointer.
 */
export function schemaProblems(value: unknown, name: string, definition?: string, prefix = ""): SchemaProblem[] {
  const fn = validator(name, definition);
  if (fn(value)) return [];
  const errors: ErrorObject[] = fn.errors ?? [];
  const seen = new Set<string>();
  const out: SchemaProblem[] = [];
  for (const e of errors) {
    const message = describe(e);
    const key = `${e.instancePath}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ pointer: prefix + e.instancePath, message });
  }
  const depth = (p: string): number => (p.match(/\//g) ?? []).length;
  out.sort((a, b) => depth(b.pointer) - depth(a.pointer) || (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : 0));
  return out;
}

function describe(e: ErrorObject): string {
  const params = e.params as Record<string, unknown>;
  let msg = e.message ?? e.keyword;
  if (e.keyword === "additionalProperties" && typeof params["additionalProperty"] === "string") {
    msg = `additional property '${params["additionalProperty"]}' is not allowed`;
  } else if (e.keyword === "enum" && Array.isArray(params["allowedValues"])) {
    msg = `must be one of ${JSON.stringify(params["allowedValues"])}`;
  }
  return msg.length > 200 ? msg.slice(0, 197) + "..." : msg;
}
