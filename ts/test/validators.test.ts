/**
 * The precompiled schema validators (src/core/validators.generated.js, written by
 * scripts/gen-validators.mjs at build time): current with `schemas/`, one for every schema and
 * `$defs` entry, and giving the same results and the same errors as validators compiled by ajv
 * at run time with the options src/core/schemas.ts used to compile them with.
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { Ajv2020 } from "ajv/dist/2020.js";

import { BASE, hasDefinition, schemaProblems, validator } from "../src/core/schemas.js";
import { SCHEMAS_DIGEST, VALIDATORS } from "../src/core/validators.generated.js";

const REPO = join(import.meta.dirname, "..", "..", "..");
const SCHEMAS = join(REPO, "schemas");
const SPEC = join(REPO, "spec");
const GENERATOR = join(REPO, "ts", "scripts", "gen-validators.mjs");

function files(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...files(path, suffix));
    else if (entry.name.endsWith(suffix)) out.push(path);
  }
  return out.sort();
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Every schema document under schemas/, by its name (path relative to schemas/). */
const schemaDocs = new Map<string, { [key: string]: Json }>(
  files(SCHEMAS, ".schema.json").map((f) => [
    relative(SCHEMAS, f).split(sep).join("/"),
    JSON.parse(readFileSync(f, "utf8")) as { [key: string]: Json },
  ]),
);

function definitionsOf(doc: { [key: string]: Json }): string[] {
  const defs = doc["$defs"];
  return typeof defs === "object" && defs !== null && !Array.isArray(defs) ? Object.keys(defs) : [];
}

/** Every ref the generated module must serve: each document and each of its `$defs` entries. */
const expectedRefs = [...schemaDocs].flatMap(([name, doc]) => [
  BASE + name,
  ...definitionsOf(doc).map((def) => `${BASE}${name}#/$defs/${def}`),
]);

describe("precompiled validators", () => {
  test("were generated from the current schemas/ (else run `npm run build`)", async () => {
    const generator = (await import(pathToFileURL(GENERATOR).href)) as { schemasDigest(dir: string): string };
    assert.equal(
      SCHEMAS_DIGEST,
      generator.schemasDigest(SCHEMAS),
      "src/core/validators.generated.js is stale: schemas/ changed since it was generated; run `npm run build` in ts/",
    );
  });

  test("serve every schema and every $defs entry, and nothing else", () => {
    assert.deepEqual(Object.keys(VALIDATORS).sort(), [...expectedRefs].sort());
    for (const [name, doc] of schemaDocs) {
      assert.equal(typeof validator(name), "function", name);
      for (const def of definitionsOf(doc)) {
        assert.equal(validator(name, def), VALIDATORS[`${BASE}${name}#/$defs/${def}`]);
        assert.equal(hasDefinition(name, def), true, `${name} ${def}`);
      }
    }
  });

  test("an unknown schema or definition still throws `no schema <ref>`", () => {
    assert.throws(() => validator("nope.schema.json"), { message: `no schema ${BASE}nope.schema.json` });
    assert.throws(() => validator("event.schema.json", "data.nope"), {
      message: `no schema ${BASE}event.schema.json#/$defs/data.nope`,
    });
    assert.throws(() => validator("toString"), { message: `no schema ${BASE}toString` });
    assert.equal(hasDefinition("event.schema.json", "data.nope"), false);
    assert.equal(hasDefinition("nope.schema.json", "entry"), false);
    assert.equal(hasDefinition("event.schema.json", "constructor"), false);
    assert.equal(hasDefinition("constructor", "entry"), false);
  });

  test("set .errors like a compiled validator, and schemaProblems words them as before", () => {
    const fn = validator("event.schema.json", "data.forked");
    assert.equal(fn({ branch_id: "b", from_event_id: "e1" }), true);
    assert.equal(fn.errors, null);
    assert.equal(fn({ branch_id: "", extra: 1 }), false);
    assert.deepEqual(schemaProblems({ branch_id: "", extra: 1 }, "event.schema.json", "data.forked", "/data"), [
      { pointer: "/data/branch_id", message: "must NOT have fewer than 1 characters" },
      { pointer: "/data", message: "must have required property 'from_event_id'" },
      { pointer: "/data", message: "additional property 'extra' is not allowed" },
    ]);
  });

  test("give the results and errors of validators compiled at run time, on spec/ documents", () => {
    // the instance src/core/schemas.ts built before the validators were precompiled
    const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
    for (const doc of schemaDocs.values()) ajv.addSchema(doc);
    // every distinct JSON object in spec/ (documents, JSON lines and the objects inside them)
    // and the schemas themselves; each ref gets every 32nd of them (all would take seconds)
    const distinct = new Map<string, Json>();
    const collect = (value: Json): void => {
      if (typeof value !== "object" || value === null) return;
      if (!Array.isArray(value)) distinct.set(JSON.stringify(value), value);
      for (const inner of Object.values(value)) collect(inner);
    };
    for (const f of files(SPEC, ".json")) collect(JSON.parse(readFileSync(f, "utf8")) as Json);
    for (const f of files(SPEC, ".jsonl")) {
      for (const line of readFileSync(f, "utf8").split("\n")) if (line.trim() !== "") collect(JSON.parse(line) as Json);
    }
    const corpus = [...distinct.values(), ...schemaDocs.values()];
    let compared = 0;
    let invalid = 0;
    let withVariants = 0;
    const same = (ref: string, value: Json): boolean => {
      const compiled = ajv.getSchema(ref)!;
      const precompiled = VALIDATORS[ref]!;
      const ok = precompiled(value);
      const compiledOk = compiled(value);
      // JSON text: a deepEqual of every error list would take several times longer
      const errors = JSON.stringify(precompiled.errors);
      if (ok !== compiledOk || errors !== JSON.stringify(compiled.errors)) {
        const where = `${ref}: ${JSON.stringify(value).slice(0, 300)}`;
        assert.equal(ok, compiledOk, where);
        assert.equal(errors, JSON.stringify(compiled.errors), where);
      }
      compared++;
      if (!ok) invalid++;
      return ok;
    };
    for (const [k, ref] of expectedRefs.entries()) {
      assert.ok(ajv.getSchema(ref), ref);
      const valid = corpus.filter((_, i) => i % 32 === k % 32).filter((value) => same(ref, value));
      // and broken variants of up to 2 documents the schema accepts, so its error paths run
      for (const value of valid.slice(0, 2)) for (const v of variants(value)) same(ref, v);
      if (valid.length > 0) withVariants++;
    }
    assert.ok(compared > 5_000 && invalid > compared / 2, `${compared} compared, ${invalid} invalid`);
    assert.ok(withVariants >= 15, `only ${withVariants} of ${expectedRefs.length} refs accepted a document`);
  });
});

/** Instances near `value`: each property (to depth 2) removed, nulled, retyped; one added. */
function variants(value: Json, depth = 0): Json[] {
  if (depth > 1 || typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) {
    const out: Json[] = [[...value, null]];
    if (value.length > 0) out.push(...variants(value[0]!, depth + 1).map((v) => [v, ...value.slice(1)]));
    return out;
  }
  const out: Json[] = [{ ...value, x_unexpected_zz: 1 }];
  for (const [key, inner] of Object.entries(value)) {
    const { [key]: _removed, ...rest } = value;
    out.push(rest, { ...value, [key]: null }, { ...value, [key]: typeof inner === "string" ? 7 : "" });
    for (const v of variants(inner, depth + 1)) out.push({ ...value, [key]: v });
  }
  return out;
}
