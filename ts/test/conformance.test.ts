/**
 * The data-only conformance cases of spec/conformance/: canonical/ (strict reader and canonical
 * writer) and reduce/ (log reader, dialects and reducer), one test per file.
 */

import { strict as assert } from "node:assert";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import {
  CaseError,
  canonicalDocument,
  canonicalLine,
  conformanceDir,
  getDialect,
  parse,
  reduce,
  type JsonObject,
  type JsonValue,
} from "../src/index.js";

const encoder = new TextEncoder();

function caseFiles(kind: string): string[] {
  const dir = join(conformanceDir(), kind);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => n.endsWith(".json")).sort().map((n) => join(dir, n));
}

function load(path: string): JsonObject {
  const value = parse(readFileSync(path), { code: "json_invalid", file: path });
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error(`${path}: a case is an object`);
  return value;
}

function bytesOf(text: JsonValue | undefined, base64: JsonValue | undefined): Uint8Array {
  if (typeof text === "string") return encoder.encode(text);
  assert.equal(typeof base64, "string", "a case has input text or base64 bytes");
  return new Uint8Array(Buffer.from(base64 as string, "base64"));
}

function expectCaseError(fn: () => unknown): CaseError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: "expected a CaseError" });
}

const name = (path: string): string => path.slice(path.lastIndexOf("/") + 1);

describe("canonical conformance", () => {
  const files = caseFiles("canonical");
  test("there are at least 25 canonical cases", () => {
    assert.ok(files.length >= 25, `${files.length} cases`);
  });
  for (const path of files) {
    test(name(path), () => {
      const raw = readFileSync(path);
      const c = load(path);
      assert.equal(raw.toString("utf8"), canonicalDocument(c), "case files are canonical documents");
      const input = bytesOf(c["input_text"], c["input_base64"]);
      if ("error" in c) {
        const err = expectCaseError(() => parse(input, { code: "json_invalid" }));
        assert.equal(err.code, c["error"], err.render());
        return;
      }
      const value = parse(input, { code: "json_invalid" });
      assert.equal(canonicalLine(value), c["line"]);
      assert.equal(canonicalDocument(value), c["document"]);
    });
  }
});

describe("reduce conformance", () => {
  const files = caseFiles("reduce");
  const work = mkdtempSync(join(tmpdir(), "threads-cases-ts-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  for (const path of files) {
    test(name(path), () => {
      const c = load(path);
      const dialectName = c["dialect"];
      assert.equal(typeof dialectName, "string");
      const dialect = getDialect(dialectName as string);
      const events = c["log"];
      const bytes = Array.isArray(events)
        ? encoder.encode(events.map((ev) => canonicalLine(ev) + "\n").join(""))
        : bytesOf(c["log_text"], c["log_base64"]);
      const expectedState = c["state"];
      const errorLine = c["error_line"];

      // 1. through the file reader (every case)
      const logFile = join(work, name(path).replace(/\.json$/, ".jsonl"));
      writeFileSync(logFile, bytes);
      if (expectedState !== undefined) {
        const state = reduce(logFile, { dialect });
        assert.deepStrictEqual(dialect.encodeState(state as unknown as JsonObject), expectedState);
        // the same bytes from memory reduce the same way
        assert.deepStrictEqual(dialect.encodeState(reduce(bytes, { dialect }) as unknown as JsonObject), expectedState);
      } else {
        const err = expectCaseError(() => reduce(logFile, { dialect }));
        assert.equal(err.code, c["error"], err.render());
        if (errorLine !== undefined) {
          assert.equal(err.file, logFile, err.render());
          assert.equal(err.line, errorLine, err.render());
        }
        const errorColumn = c["error_column"];
        if (errorColumn !== undefined) {
          // a syntax refusal: line and column, never a pointer (the same form as Python's)
          assert.equal(err.pointer, undefined, err.render());
          assert.ok(err.message.endsWith(`(column ${String(errorColumn)})`), err.render());
        }
        // a value refusal: located by its pointer
        if (c["error_pointer"] !== undefined) assert.equal(err.pointer, c["error_pointer"], err.render());
      }

      // 2. through the in-memory API (cases given as values)
      if (!Array.isArray(events)) return;
      if (expectedState !== undefined) {
        const state = reduce(events, { dialect });
        assert.deepStrictEqual(dialect.encodeState(state as unknown as JsonObject), expectedState);
      } else {
        const err = expectCaseError(() => reduce(events, { dialect }));
        assert.equal(err.code, c["error"], err.render());
        if (typeof errorLine === "number") assert.equal(err.file, `event ${errorLine - 1}`, err.render());
      }
    });
  }
});
