/** Unit tests of the strict reader and the JSON Lines line rules. */

import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { CaseError, iterJsonl, iterLines, MAX_DEPTH, parse, parseString, readJsonFile, type JsonValue } from "../src/index.js";

const enc = new TextEncoder();
const bytes = (text: string): Uint8Array => enc.encode(text);

function refusal(fn: () => unknown): CaseError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: "expected a CaseError" });
}

describe("parse accepts RFC 8259 JSON", () => {
  const accepted: Array<[string, JsonValue]> = [
    ["{}", {}],
    ["[]", []],
    ['{"a":[1,2.5,-3e2,true,false,null,"x"]}', { a: [1, 2.5, -300, true, false, null, "x"] }],
    [' \t\r\n"s" \n', "s"],
    ['"\\u00e9\\ud83d\\ude02\\/\\b\\f\\n\\r\\t\\"\\\\"', "é😂/\b\f\n\r\t\"\\"],
    ["9007199254740991", 9007199254740991],
    ["-9007199254740991", -9007199254740991],
    ["9007199254740993.0", 9007199254740992],
    ["1e400".replace("400", "308"), 1e308],
    ["1e-400", 0],
  ];
  for (const [text, value] of accepted) {
    test(JSON.stringify(text), () => assert.deepStrictEqual(parseString(text), value));
  }

  test("the integer token -0 is 0, the double -0.0 is -0", () => {
    assert.ok(Object.is(parseString("-0"), 0));
    assert.ok(Object.is(parseString("-0.0"), -0));
  });

  test("a __proto__ key is an own property and leaves the prototype alone", () => {
    const v = parseString('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(v), Object.prototype);
    assert.deepStrictEqual(Object.keys(v), ["__proto__"]);
    assert.equal(({} as Record<string, unknown>)["polluted"], undefined);
    assert.equal(refusal(() => parseString('{"__proto__": 1, "__proto__": 2}')).pointer, "/__proto__");
  });

  test(`${MAX_DEPTH} nested containers are accepted`, () => {
    assert.ok(Array.isArray(parseString("[".repeat(MAX_DEPTH) + "]".repeat(MAX_DEPTH))));
    const objects = '{"a":'.repeat(MAX_DEPTH - 1) + "{}" + "}".repeat(MAX_DEPTH - 1);
    assert.equal(typeof parseString(objects), "object");
  });
});

describe("parse refuses", () => {
  const refused: Array<[string, string | Uint8Array, string | undefined]> = [
    ["a duplicate key", '{"a":1,"b":{"k":1,"k":2}}', "/b/k"],
    ["a duplicate key after unescaping", '{"a":1,"\\u0061":2}', "/a"],
    ["the integer 2^53", '{"n":[0,9007199254740992]}', "/n/1"],
    ["the integer -2^53", "-9007199254740992", ""],
    ["a 30-digit integer", "123456789012345678901234567890", ""],
    ["a double that overflows", "[1e309]", undefined],
    ["NaN", "[NaN]", undefined],
    ["Infinity", '{"x":Infinity}', undefined],
    ["-Infinity", "-Infinity", undefined],
    ["an escaped lone high surrogate", '{"s":"\\ud800"}', undefined],
    ["an escaped lone low surrogate", '["\\udc00"]', undefined],
    ["a high surrogate followed by a non-surrogate escape", '["\\ud800\\u0041"]', undefined],
    ["a byte order mark", new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), undefined],
    ["invalid UTF-8", new Uint8Array([0x5b, 0x22, 0xff, 0x22, 0x5d]), undefined],
    ["a UTF-8 encoded surrogate", new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), undefined],
    ["an overlong UTF-8 encoding", new Uint8Array([0x22, 0xc0, 0xaf, 0x22]), undefined],
    ["a trailing comma", "[1,]", undefined],
    ["a leading zero", "012", undefined],
    ["a leading plus", "+1", undefined],
    ["a bare fraction", ".5", undefined],
    ["a missing fraction digit", "1.", undefined],
    ["single quotes", "{'a':1}", undefined],
    ["an unquoted key", "{a:1}", undefined],
    ["a raw control character in a string", '"a\u0001b"', undefined],
    ["an invalid escape", '"\\x41"', undefined],
    ["a short \\u escape", '"\\u12"', undefined],
    ["an unterminated string", '"abc', undefined],
    ["an unclosed array", "[1,2", undefined],
    ["a comment", "[1] // c", undefined],
    ["two values", "1 2", undefined],
    ["an empty text", "", undefined],
    ["whitespace only", " \n ", undefined],
    ["a form feed as whitespace", "\f1", undefined],
    ["a non-breaking space as whitespace", "\u00a01", undefined],
    ["a BOM after whitespace", " \ufeff1", undefined],
    ["True in capitals", "True", undefined],
    ["nesting one level too deep", "[".repeat(MAX_DEPTH + 1) + "]".repeat(MAX_DEPTH + 1), "/0".repeat(MAX_DEPTH)],
  ];
  for (const [what, input, pointer] of refused) {
    test(what, () => {
      const err = refusal(() => parse(typeof input === "string" ? bytes(input) : input));
      assert.equal(err.code, "json_invalid");
      if (pointer !== undefined) assert.equal(err.pointer, pointer, err.render());
      // a token refusal (syntax, NaN, a double out of range, a lone surrogate) is located by
      // line and column, as the Python reader locates it (spec/strict-json.md 2)
      else assert.match(err.message, /\(column \d+\)$|byte order mark|invalid UTF-8|empty/, err.render());
    });
  }

  test("100000 levels of nesting without a stack overflow", () => {
    const n = 100000;
    assert.equal(refusal(() => parseString("[".repeat(n) + "]".repeat(n))).code, "json_invalid");
    assert.equal(refusal(() => parseString('{"a":'.repeat(n) + "1" + "}".repeat(n))).code, "json_invalid");
    assert.equal(refusal(() => parseString("[".repeat(n))).code, "json_invalid");
  });

  test("the caller's code, file and line are kept", () => {
    const err = refusal(() => parse(bytes("[1,]"), { code: "log_invalid", file: "x.jsonl", line: 7 }));
    assert.equal(err.code, "log_invalid");
    assert.equal(err.file, "x.jsonl");
    assert.equal(err.line, 7);
    assert.match(err.render(), /^error\[log_invalid\]: x\.jsonl:7: /);
  });

  test("without a line, the line in the text is given", () => {
    // a repeated key or a big integer: its pointer and its line, as in Python (spec/conformance/case-errors/)
    const dup = refusal(() => parseString('{\n  "a": 1,\n  "a": 2\n}'));
    assert.deepEqual([dup.line, dup.pointer], [3, "/a"]);
    const big = refusal(() => parseString('{\n  "x": "a:b",\n  "f": 123456789012345678901234\n}'));
    assert.deepEqual([big.line, big.pointer], [3, "/f"]);
    assert.equal(refusal(() => parseString("[\n1,\n2,\n]")).line, 4);
  });
});

describe("readJsonFile", () => {
  test("refuses a missing and an empty file", () => {
    const dir = mkdtempSync(join(tmpdir(), "tc-json-"));
    try {
      assert.equal(refusal(() => readJsonFile(join(dir, "missing.json"))).code, "json_invalid");
      writeFileSync(join(dir, "empty.json"), " \n");
      const err = refusal(() => readJsonFile(join(dir, "empty.json"), { code: "log_invalid" }));
      assert.equal(err.code, "log_invalid");
      writeFileSync(join(dir, "ok.json"), '{"a": [1]}\n');
      assert.deepStrictEqual(readJsonFile(join(dir, "ok.json")), { a: [1] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("JSON Lines line rules", () => {
  /** The lines of `text` (bytes), or of the file at `path`, rendered for comparison. */
  const lines = (text: string | { path: string }, options = {}): Array<string> =>
    [...iterLines(typeof text === "string" ? bytes(text) : text.path, options)].map((item) =>
      item.error ? `${item.line}:${item.error.message}` : `${item.line}=${new TextDecoder("utf-8", { ignoreBOM: true }).decode(item.body)}`,
    );

  test("lines end with \\n; the last may lack it", () => {
    assert.deepStrictEqual(lines("1\n2\n3"), ["1=1", "2=2", "3=3"]);
    assert.deepStrictEqual(lines("1\n2\n"), ["1=1", "2=2"]);
    assert.deepStrictEqual(lines(""), []);
  });

  test("blank lines, CR line ends and a BOM on line 1 are refused, each with its line", () => {
    assert.deepStrictEqual(lines("1\n\n \t\n\u000b\n2\r\n3"), [
      "1=1",
      "2:blank line",
      "3:blank line",
      "4:blank line",
      "5:CR line end; lines end with \\n only",
      "6=3",
    ]);
    assert.deepStrictEqual(lines("\ufeff{}\n\ufeff{}\n"), ["1:byte order mark at the start of the file", "2=\ufeff{}"]);
    assert.deepStrictEqual(lines("\n"), ["1:blank line"]);
  });

  test("a line longer than the limit is refused and skipped; one at the limit is kept", () => {
    const opts = { maxLineBytes: 4, chunkSize: 3 };
    assert.deepStrictEqual(lines("1234\n12345\n1\n123456789", opts), ["1=1234", "2:line longer than 64 MiB", "3=1", "4:line longer than 64 MiB"]);
    assert.deepStrictEqual(lines("123\r\n", opts), ["1:CR line end; lines end with \\n only"]);
    assert.deepStrictEqual(lines("1234\r\n", opts), ["1:line longer than 64 MiB"]);
  });

  test("a file read in small chunks gives the same lines as its bytes", () => {
    const text = '{"a":1}\n\n{"b":"é😂"}\r\n[1,2,3]\n"x"';
    const dir = mkdtempSync(join(tmpdir(), "tc-jsonl-"));
    try {
      const path = join(dir, "log.jsonl");
      writeFileSync(path, text);
      for (const chunkSize of [1, 2, 3, 5, 7, 1024]) {
        assert.deepStrictEqual(lines({ path }, { chunkSize }), lines(text));
      }
      const err = refusal(() => [...iterJsonl(path)]);
      assert.equal(err.code, "log_invalid");
      assert.equal(err.file, path);
      assert.equal(err.line, 2);
      assert.equal(refusal(() => [...iterJsonl(join(dir, "missing.jsonl"))]).code, "log_invalid");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("iterJsonl parses each line strictly with the line number", () => {
    assert.deepStrictEqual([...iterJsonl(bytes('{"a":1}\n[2]\n'))], [
      [1, { a: 1 }],
      [2, [2]],
    ]);
    const err = refusal(() => [...iterJsonl(bytes('{"a":1}\n{"a":1,"a":2}\n'), { name: "log.jsonl" })]);
    assert.deepStrictEqual([err.code, err.file, err.line, err.pointer], ["log_invalid", "log.jsonl", 2, "/a"]);
  });
});
