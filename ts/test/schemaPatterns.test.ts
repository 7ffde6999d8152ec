/**
 * Every regular expression of schemas/ is read the same by every engine (spec/README.md,
 * "Schemas"): only the syntax ECMA-262, Python's re, RE2 (Go) and PCRE share, as
 * tests/test_schema_patterns.py checks the same files.
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const SCHEMAS = join(import.meta.dirname, "..", "..", "..", "schemas");
/** \xHH, or a backslash before a character that is special somewhere in a pattern. */
const ESCAPE = /\\(?:x[0-9a-fA-F]{2}|[\\.^$*+?()[\]{}|/-])/g;

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : name.endsWith(".json") ? [path] : [];
  });
}

function patterns(value: unknown, out: string[]): string[] {
  if (Array.isArray(value)) for (const item of value) patterns(item, out);
  else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "pattern" && typeof item === "string") out.push(item);
      else if (key === "patternProperties" && typeof item === "object" && item !== null) {
        out.push(...Object.keys(item));
        patterns(Object.values(item), out);
      } else patterns(item, out);
    }
  }
  return out;
}

test("every schema pattern uses only the syntax every engine shares", () => {
  const all = files(SCHEMAS).flatMap((f) => patterns(JSON.parse(readFileSync(f, "utf8")), []).map((p) => [f, p] as const));
  assert.ok(all.length >= 10);
  for (const [file, pattern] of all) {
    const rest = pattern.replace(ESCAPE, "");
    assert.ok(!rest.includes("\\"), `${file}: ${pattern} has an escape not every engine reads`);
    assert.ok(!rest.replaceAll("(?:", "").includes("(?"), `${file}: ${pattern} has a group syntax not shared`);
    new RegExp(pattern, "u");
  }
});
