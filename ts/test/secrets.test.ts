/**
 * The data-only secrets tests (spec/conformance/secrets/, spec/conformance.md 2.6), the files
 * tests/test_conformance_secrets.py runs: the same findings and redacted output, exactly; and
 * saveCase scanning, redacting and refusing like the Python writer.
 */

import { strict as assert } from "node:assert";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { conformanceDir } from "../src/core/resources.js";
import { checkCaseFiles } from "../src/case/save.js";
import { findInValue, kinds, kindsIn, placeholder, redactBytes, redactText, redactValue, scanBytes, scanFiles } from "../src/case/secrets.js";
import { CaseError } from "../src/core/errors.js";
import type { JsonValue } from "../src/core/strictjson.js";
import { AgentSpec, BUILTIN_TOOLS } from "../src/reference/agent.js";
import { readCaseFiles } from "../src/case/case.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { replayCase } from "../src/reference/replay.js";
import { Clock } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const dir = join(conformanceDir(), "secrets");
const names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();

describe("secrets conformance", () => {
  test("the suite has at least 300 tests and the rules at least 60 kinds", () => {
    assert.ok(names.length >= 300);
    assert.ok(kinds().length >= 60);
  });
  for (const name of names) {
    const t = JSON.parse(readFileSync(join(dir, name), "utf8")) as Record<string, unknown>;
    test(`${name}: ${String(t["description"])}`, () => {
      if (typeof t["text"] === "string") {
        assert.deepEqual(kindsIn(t["text"]), t["findings"]);
        assert.equal(redactText(t["text"]), t["redacted"]);
      } else if ("value" in t) {
        assert.deepEqual(
          findInValue(t["value"]).map(([kind, pointer]) => ({ kind, pointer })),
          t["findings"],
        );
        assert.deepEqual(redactValue(t["value"] as JsonValue), t["redacted"]);
      } else {
        const data = new Uint8Array(Buffer.from(t["bytes_base64"] as string, "base64"));
        assert.deepEqual(
          scanBytes(data).map(([view, kind]) => ({ kind, view })),
          t["findings"],
        );
        assert.equal(Buffer.from(redactBytes(data)).toString("base64"), t["redacted_base64"]);
      }
    });
  }
});

describe("case files", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-secrets-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  const key = "sk-ant-api03-" + "Zq9x".repeat(20);
  const files = new Map<string, Uint8Array>([
    ["case.json", Buffer.from(JSON.stringify({ input: `use ${key}` }))],
    ["log.threads-py.jsonl", Buffer.from(`{"a":"x"}\n{"${key}":1}\n`)],
    ["artifacts/ab", Buffer.from("token: ghp_" + "a".repeat(36), "utf16le")],
  ]);

  test("findings name the file, line, masked pointer or view, never the value", () => {
    const found = scanFiles(files);
    assert.deepEqual(found, [
      { kind: "github_token", file: "artifacts/ab", view: "utf-16le" },
      { kind: "anthropic_api_key", file: "case.json", pointer: "/input" },
      { kind: "anthropic_api_key", file: "log.threads-py.jsonl", pointer: "/" + placeholder(key), line: 2 },
    ]);
  });

  test("checkCaseFiles refuses case_too_large first, then secret_detected without the value", () => {
    assert.throws(() => checkCaseFiles(files, "refuse", 10), (e: unknown) => e instanceof CaseError && e.code === "case_too_large");
    assert.throws(
      () => checkCaseFiles(files, "refuse"),
      (e: unknown) => e instanceof CaseError && e.code === "secret_detected" && !e.message.includes(key.slice(0, 20)),
    );
    assert.throws(
      () => checkCaseFiles(files, "redact"),
      (e: unknown) => e instanceof CaseError && e.message.startsWith("redaction would leave"),
    );
    checkCaseFiles(files, "allow");
  });
});

describe("saveCase with secrets", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-save-secrets-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  const key = "ghp_" + "a".repeat(36);
  const awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  function recorded(): { thread: Thread; at: string } {
    const files = {
      "creds.txt": new Uint8Array(Buffer.from(`AKIAIOSFODNN7EXAMPLE,${awsSecret}\n`, "utf16le")),
      "notes.txt": `token: ${key}\n`,
    };
    const agent = new AgentSpec("a", "m", "s", Object.values(BUILTIN_TOOLS));
    const thread = Thread.create({ agent, sandbox: new FakeSandbox(files), threadId: "t", clock: new Clock(1_795_982_400_000, 7) });
    const at = thread.events[0]?.event_id as string;
    thread.runTurn(
      `use ${key}`,
      new ScriptedModel([
        toolReply([
          ["tu_1", "read_file", { path: "notes.txt" }],
          ["tu_2", "read_file", { path: "creds.txt" }],
          ["tu_3", "write_file", { path: "out.txt", content: JSON.stringify({ password: "correct horse" }) }],
        ]),
        textReply("done"),
      ]),
    );
    return { thread, at };
  }

  test("refuses by default naming places, never values", () => {
    const { thread, at } = recorded();
    const r = thread.saveCase("c", { at, dir: work });
    assert.ok(!r.ok && r.error.code === "secret_detected", JSON.stringify(r));
    assert.ok(!r.error.message.includes(key) && !r.error.message.includes(awsSecret));
  });

  test("redacts every copy, UTF-16 artifacts and both halves of an AWS pair, and still replays", () => {
    const { thread, at } = recorded();
    const r = thread.saveCase("c", { at, dir: work, secrets: "redact" });
    assert.ok(r.ok, JSON.stringify(r));
    const files = readCaseFiles(r.value.path);
    assert.deepEqual(scanFiles(files), []);
    const all = Buffer.concat([...files.values()]);
    for (const needle of [key, awsSecret, "correct horse", Buffer.from(awsSecret, "utf16le").toString("latin1")]) {
      assert.ok(!all.toString("latin1").includes(needle), needle);
    }
    assert.ok(all.toString("utf8").includes(placeholder(key)));
    assert.equal(replayCase(r.value.path).stop, null);
  });

  test("an unknown mode is invalid_request, and allow saves knowingly", () => {
    const { thread, at } = recorded();
    const bad = thread.saveCase("d", { at, dir: work, secrets: "maybe" });
    assert.ok(!bad.ok && bad.error.code === "invalid_request");
    const ok = thread.saveCase("e", { at, dir: work, secrets: "allow" });
    assert.ok(ok.ok, JSON.stringify(ok));
  });
});

describe("saveCase redacts a backslash-n private key whole", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-save-sa-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  // a service-account file as it sits on disk: the key's newlines are backslash-n
  const body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "q1W2e3R4t5Y6".repeat(6);
  const account =
    '{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n' +
    `${body.slice(0, 64)}\\n${body.slice(64)}` +
    '\\n-----END PRIVATE KEY-----\\n", "client_email": "x@demo.example"}';
  for (const encoding of ["utf8", "latin1", "utf16le"] as const) {
    test(`in a message, an object key, a reply and a ${encoding} artifact (spec/case-format.md 10.2)`, () => {
      const data = (encoding === "latin1" ? "caf\u00e9 " : "") + account;
      const agent = new AgentSpec("a", "m", "s", Object.values(BUILTIN_TOOLS));
      const sandbox = new FakeSandbox({ "sa.json": new Uint8Array(Buffer.from(data, encoding)) });
      const thread = Thread.create({ agent, sandbox, threadId: "sa", clock: new Clock(1_795_982_400_000, 7) });
      const at = thread.events[0]?.event_id as string;
      thread.runTurn(
        `here it is: ${account}`,
        new ScriptedModel([
          toolReply([
            ["tu_1", "read_file", { path: "sa.json" }],
            ["tu_2", "x", { [account]: 1 }],
          ]),
          textReply(`got ${account}`),
        ]),
      );
      const refused = thread.saveCase(`r-${encoding}`, { at, dir: work });
      assert.ok(!refused.ok && refused.error.code === "secret_detected", JSON.stringify(refused));
      assert.ok(!refused.error.message.includes(body.slice(0, 20)));
      const r = thread.saveCase(`c-${encoding}`, { at, dir: work, secrets: "redact" });
      assert.ok(r.ok, JSON.stringify(r));
      const files = readCaseFiles(r.value.path);
      assert.deepEqual(scanFiles(files), []);
      const all = Buffer.concat([...files.values()]).toString("latin1");
      for (const piece of [body.slice(0, 64), body.slice(64), body.slice(10, 30)]) {
        assert.ok(!all.includes(piece), piece);
        assert.ok(!all.includes(Buffer.from(piece, "utf16le").toString("latin1")), piece);
      }
    });
  }
});
