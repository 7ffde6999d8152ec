/**
 * JSON Schema validation against the shared `schemas/` documents (JSON Schema 2020-12), with
 * ajv. Every `schemas/**\/*.schema.json` is added by its `$id`, so cross-file `$ref`s resolve
 * offline; {@link validator} returns a cached validator for a document or one `$defs` entry.
 */

import { readdirSync } from "node:fs";
import { join } from "node:path";

import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";

import { schemasDir } from "./resources.js";
import { readJsonFile, type JsonObject } from "./strictjson.js";

export const BASE = "https://threads-cases.dev/schemas/";

let ajv: Ajv2020 | null = null;
const validators = new Map<string, ValidateFunction>();

function schemaFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...schemaFiles(path));
    else if (entry.name.endsWith(".schema.json")) out.push(path);
  }
  return out.sort();
}

function instance(): Ajv2020 {
  if (ajv !== null) return ajv;
  // strict: false because the schemas use `if` blocks and union types that ajv's strict mode
  // flags although they are valid 2020-12; allErrors so a refusal can name the deepest problem.
  const created = new Ajv2020({ strict: false, allErrors: true });
  for (const file of schemaFiles(schemasDir())) {
    const doc = readJsonFile(file) as JsonObject;
    created.addSchema(doc, typeof doc["$id"] === "string" ? undefined : BASE + file);
  }
  ajv = created;
  return created;
}

/** A validator for `schemas/<name>`, or for its `$defs/<definition>` entry. */
export function validator(name: string, definition?: string): ValidateFunction {
  const ref = definition === undefined ? BASE + name : `${BASE}${name}#/$defs/${definition}`;
  let fn = validators.get(ref);
  if (fn === undefined) {
    fn = instance().getSchema(ref);
    if (fn === undefined) throw new Error(`no schema ${ref}`);
    validators.set(ref, fn);
  }
  return fn;
}

/** Whether `schemas/<name>` has `$defs/<definition>`. */
export function hasDefinition(name: string, definition: string): boolean {
  const doc = instance().getSchema(BASE + name)?.schema as JsonObject | undefined;
  const defs = doc?.["$defs"];
  return typeof defs === "object" && defs !== null && !Array.isArray(defs) && Object.hasOwn(defs, definition);
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
