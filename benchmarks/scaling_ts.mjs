// TypeScript scaling curves for benchmarks/scaling.py (the same 1x/4x/16x rule, issue 20), run
// on the built TypeScript implementation (ts/dist):
//   ts-reduce     short turns, no snapshot, reduced by the reducer (the turn-id check), per turn
//   ts-snapshots  a snapshot after every event, reduced (the snapshot-id check), per snapshot
//   ts-record     turns recorded through the Thread API (a tool call and a reply each), per turn
//   ts-snapshot   one Thread.snapshot() per recorded turn, per turn
//   ts-events     reading thread.events.at(-1) once per recorded turn, per turn
//   ts-fork       a thread of n turns (recorded outside the timing) forked 10n times at its
//                 last event: a fork shares the log, ids and state, per turn
//   ts-reply      one turn of 60 model calls whose tool results grow with the size: the request
//                 hash (reference/request.ts) must not re-encode the conversation, per kB
// Usage: node --expose-gc scaling_ts.mjs [scale] [curve ...] (ROUNDS=3 and SAMPLES=4 by default:
// processes per size, and samples per process).
// Prints one JSON line per curve: {"curve", "unit", "sizes", "seconds"}, the best CPU seconds
// of one run at each size (process.cpuUsage, user + system, every thread of the process).
// How a sample is taken is explained where the samples are taken, at the end of this file.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

import { Reducer } from "../ts/dist/src/core/reducer.js";
import { AgentSpec, BUILTIN_TOOLS, FakeSandbox, ScriptedModel, Thread, textReply, toolReply } from "../ts/dist/src/index.js";

function envelope(seq, type, data) {
  return {
    event_id: `e${seq}`, thread_id: "t", seq, type,
    actor_kind: type === "user_message" ? "user" : "system",
    epoch: 0, branch_id: "main", critical: false, ts: "2026-11-30T00:00:00.000Z", data,
  };
}

function shortTurns(nTurns) {
  const evs = [envelope(0, "thread_started", { agent: { name: "b", model: "m", system: "s", tools: [] }, metadata: {} })];
  for (let t = 0; t < nTurns; t++) {
    const turn_id = `turn-${t}`;
    evs.push(envelope(evs.length, "user_message", { content: "hi" }));
    evs.push(envelope(evs.length, "turn_started", { turn_id }));
    evs.push(envelope(evs.length, "turn_completed", { turn_id, stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }));
  }
  return evs;
}

function reduceAll(evs) {
  return () => {
    const r = new Reducer(null, { copyData: false });
    for (const ev of evs) r.apply(ev);
    return r;
  };
}

function reduce(n) {
  return reduceAll(shortTurns(n));
}

function snapshots(n) {
  const evs = shortTurns(1);
  for (let i = 0; i < n; i++) evs.push(envelope(evs.length, "snapshot_taken", { snapshot_id: `s${i}` }));
  return reduceAll(evs);
}

const AGENT = new AgentSpec("bench", "model-x", "Be brief.", Object.values(BUILTIN_TOOLS));

/** `n` turns recorded through the Thread API; `each(thread)` runs after every turn. */
function recorded(n, each) {
  // the models (the scripted replies) are input: built before the timed part
  const models = Array.from(
    { length: n },
    (_, i) => new ScriptedModel([toolReply([[`tu_${i}`, "read_file", { path: "notes.txt" }]]), textReply(`answer ${i}`)]),
  );
  return () => {
    const thread = Thread.create({ agent: AGENT, sandbox: new FakeSandbox({ "notes.txt": "buy milk" }), threadId: "t" });
    for (let i = 0; i < n; i++) {
      thread.runTurn(`question ${i}`, models[i]);
      each(thread);
    }
    return thread;
  };
}

const record = (n) => recorded(n, () => {});
const snapshot = (n) => recorded(n, (thread) => thread.snapshot());
const events = (n) =>
  recorded(n, (thread) => {
    if (thread.events.at(-1).type !== "turn_completed") throw new Error("the last event is not turn_completed");
  });

function fork(n) {
  const thread = Thread.create({ agent: AGENT, sandbox: new FakeSandbox({ "notes.txt": "buy milk" }), threadId: "t" });
  recordInto(thread, n);
  const head = thread.events.at(-1).event_id;
  return () => {
    for (let i = 0; i < 10 * n; i++) thread.fork(head, { branchId: `b${i}` });
  };
}

function recordInto(thread, n) {
  for (let i = 0; i < n; i++) {
    thread.runTurn(`question ${i}`, new ScriptedModel([toolReply([[`tu_${i}`, "read_file", { path: "notes.txt" }]]), textReply(`answer ${i}`)]));
  }
}

function reply(n) {
  const calls = 60;
  const text = "x".repeat(Math.floor((n * 1000) / calls));
  const replies = Array.from({ length: calls }, (_, i) => toolReply([[`tu_${i}`, "read_file", { path: "big.txt" }]]));
  return () => {
    const thread = Thread.create({ agent: AGENT, sandbox: new FakeSandbox({ "big.txt": text }), threadId: "t" });
    thread.runTurn("read it all", new ScriptedModel([...replies, textReply("done")]));
    return thread;
  };
}

/**
 * CPU seconds of one call of each of `runs`, after a full GC. What each run returns (its
 * reducer or thread) is kept until the sample ends, as a caller keeps the state it reduced:
 * every sample then builds and holds the same bytes, so a 1x run's state cannot die in the
 * young generation for free while the 16x run's state is copied and promoted (see README,
 * "Scaling curves").
 */
function sample(runs) {
  globalThis.gc?.();
  const kept = new Array(runs.length);
  const t = process.cpuUsage();
  for (let i = 0; i < runs.length; i++) kept[i] = runs[i]();
  const d = process.cpuUsage(t);
  kept.length = 0;
  return (d.user + d.system) / 1e6;
}

const CURVES = {
  "ts-reduce": [reduce, 10000, "turn"],
  "ts-snapshots": [snapshots, 5000, "snapshot"],
  "ts-record": [record, 100, "turn"],
  "ts-snapshot": [snapshot, 100, "turn"],
  "ts-events": [events, 100, "turn"],
  "ts-reply": [reply, 400, "kB"],
  "ts-fork": [fork, 60, "turn"],
};

/**
 * Child mode (`--size NAME BASE N SAMPLES`): build the inputs of one size, warm the JIT on two
 * 1x runs, print the best CPU seconds per run of SAMPLES samples or more (a second of them). Every sample does the same
 * work on distinct inputs built outside the timing (sixteen 1x inputs, four 4x, one 16x) and
 * holds what its runs built until it ends (see `sample`), so a 1x sample neither escapes the
 * young-generation collections a longer run pays nor walks an input small enough to stay in
 * the CPU cache; and each size runs in a process of its own, so
 * an old-generation collection during a sample marks that size's input only, not the inputs
 * of the other sizes.
 */
function child([name, base, n, samples]) {
  const make = CURVES[name][0];
  sample([make(base), make(base)]); // warm the JIT
  const runs = Array.from({ length: (16 * base) / n }, () => make(n));
  let best = Infinity;
  // at least `samples`, and more (up to five times as many) until a second of samples: the short
  // curves' samples last under 0.1 s, so a few of them may all miss the quiet moments the
  // other sizes' processes caught
  let spent = 0;
  for (let i = 0; i < samples || (spent < 1 && i < 5 * samples); i++) {
    const seconds = sample(runs);
    spent += seconds;
    best = Math.min(best, seconds / runs.length);
  }
  console.log(best);
}

/** The best seconds per run at each size; the sizes take turns, ROUNDS times, so a change in the machine's load reaches all three. */
function curve(name, base, sizes) {
  const seconds = sizes.map(() => Infinity);
  for (let round = 0; round < ROUNDS; round++) {
    sizes.forEach((n, i) => {
      const args = [...process.execArgv, fileURLToPath(import.meta.url), "--size", name, String(base), String(n), String(SAMPLES)];
      const out = spawnSync(process.execPath, args, { encoding: "utf8" });
      if (out.status !== 0) throw new Error(`${name} at ${n}: ${out.stderr}`);
      seconds[i] = Math.min(seconds[i], Number(out.stdout));
    });
  }
  return seconds;
}

const ROUNDS = Number(process.env.ROUNDS ?? 3);
/** Samples per process: a sample lasts 0.1-0.8 s, and on a loaded machine one in two or three is slowed by the others. */
const SAMPLES = Number(process.env.SAMPLES ?? 4);
if (process.argv[2] === "--size") {
  child(process.argv.slice(3).map((v, i) => (i === 0 ? v : Number(v))));
} else {
  const scale = Number(process.argv[2] ?? "1");
  const only = process.argv.slice(3);
  for (const [name, [, base0, unit]] of Object.entries(CURVES)) {
    if (only.length > 0 && !only.includes(name)) continue;
    const base = Math.max(1, Math.floor(base0 * scale));
    const sizes = [base, 4 * base, 16 * base];
    console.log(JSON.stringify({ curve: name, unit, sizes, seconds: curve(name, base, sizes) }));
  }
}
