/**
 * Forks share their parent's events, ids and state (issue 20): random programs of turns,
 * snapshots, restores and forks (recorded on parents and forks alike, in any order) give every
 * thread the same log, state and sandbox as the deep-copy fork it replaced. A seeded generator
 * stands in for a property-testing library (the Python twin uses hypothesis).
 */

import { strict as assert } from "node:assert";
import { test } from "node:test";

import { encodeLog } from "../src/core/log.js";
import { deepCopy, reduceEnvelopes, type Envelope } from "../src/core/reducer.js";
import { AgentSpec, BUILTIN_TOOLS } from "../src/reference/agent.js";
import { MAX_DEPTH, type SharedLog } from "../src/reference/branching.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { ArtifactStore, Clock } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const agent = new AgentSpec("a", "model-x", "Be brief.", Object.values(BUILTIN_TOOLS));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Inner = any;

/** What Thread.fork did before issue 20: copy the prefix, reduce it again, take every id. */
function deepCopyFork(t: Thread, at: string, branch: string): Thread {
  const inner = t as Inner;
  const log = (inner.log as SharedLog).slice();
  const idx = log.findIndex((e) => e.event_id === at);
  const prefix = deepCopy(log.slice(0, idx + 1));
  const sandbox = new FakeSandbox(inner.filesAt(t.sandbox, idx, reduceEnvelopes(prefix)));
  const Ctor = Thread as Inner;
  const child = new Ctor(prefix, sandbox, new ArtifactStore(t.artifacts.blobs), t.threadId, t.clock, t.agent) as Inner;
  for (const [id, p] of inner.ids.entries(Infinity)) child.ids.add(id, p);
  child.nextBranch = branch;
  child.recorder.append("forked", { from_event_id: at, branch_id: branch });
  child.nextBranch = null;
  return child as Thread;
}

function turn(t: Thread, n: number, write: boolean): void {
  const call = write ? toolReply([[`tu${n}`, "write_file", { path: "f.txt", content: `v${n}` }]]) : toolReply([[`tu${n}`, "read_file", { path: "f.txt" }]]);
  t.runTurn(`q${n}`, new ScriptedModel([call, textReply(`a${n}`)]));
}

/** A small deterministic PRNG (mulberry32). */
function rng(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) % n);
  };
}

type Op = [string, number, number];

function run(program: Op[], fork: (t: Thread, at: string, branch: string) => Thread): Thread[] {
  const threads = [Thread.create({ agent, sandbox: new FakeSandbox({ "f.txt": "v0" }), threadId: "t", clock: new Clock(0) })];
  program.forEach(([op, which, arg], n) => {
    const t = threads[which % threads.length] as Thread;
    const idle = t.state.status !== "in_turn"; // a fork made mid-turn stays there
    if (op === "turn" && idle) turn(t, n, arg % 2 === 0);
    else if (op === "snapshot") t.snapshot();
    else if (op === "restore" && idle && t.state.snapshots.length > 0) t.restore(t.state.snapshots[arg % t.state.snapshots.length] as string);
    else if (op === "fork") {
      const events = t.events;
      const at = arg % 3 === 0 ? events[events.length - 1] : events[arg % events.length];
      threads.push(fork(t, (at as Envelope).event_id, `b${n}`));
    }
  });
  return threads;
}

test("a shared fork equals the deep-copy fork (40 random programs)", () => {
  const ops = ["turn", "snapshot", "restore", "fork"];
  for (let seed = 1; seed <= 40; seed++) {
    const r = rng(seed);
    const program: Op[] = Array.from({ length: 1 + r(12) }, () => [ops[r(4)] as string, r(10), r(100)]);
    const shared = run(program, (t, at, b) => t.fork(at, { branchId: b }));
    const copied = run(program, deepCopyFork);
    assert.equal(shared.length, copied.length);
    shared.forEach((a, i) => {
      const b = copied[i] as Thread;
      assert.equal(encodeLog(a.events), encodeLog(b.events), `seed ${seed}, thread ${i}`);
      assert.equal(JSON.stringify(a.state), JSON.stringify(b.state));
      assert.deepEqual(a.state, reduceEnvelopes(a.events));
      assert.deepEqual((a.sandbox as FakeSandbox).contents, (b.sandbox as FakeSandbox).contents);
    });
  }
});

test("a chain of forks deeper than the sharing limit is flattened", () => {
  const chain = [Thread.create({ agent, sandbox: new FakeSandbox({ "f.txt": "v0" }), clock: new Clock(0) })];
  for (let n = 0; n < MAX_DEPTH * 2 + 3; n++) {
    const last = chain[chain.length - 1] as Thread;
    turn(last, n, n % 2 === 0);
    const ends = last.events.filter((e) => e.type === "turn_completed").map((e) => e.event_id);
    const at = ends.length > 1 && n % 2 === 1 ? ends[ends.length - 2] : ends[ends.length - 1];
    chain.push(last.fork(at as string, { branchId: `b${n}` }));
  }
  assert.ok(Math.max(...chain.map((c) => (c as Inner).ids.depth as number)) <= MAX_DEPTH);
  assert.ok(Math.max(...chain.map((c) => (c as Inner).log.depth as number)) <= MAX_DEPTH);
  for (const c of chain) {
    const events = c.events;
    assert.deepEqual(c.state, reduceEnvelopes(events));
    for (const i of [0, events.length >> 1, events.length - 1]) {
      assert.deepEqual(c.fork((events[i] as Envelope).event_id).events.slice(0, i + 1), events.slice(0, i + 1));
    }
    assert.equal(new Set(events.map((e) => e.event_id)).size, events.length);
  }
});
