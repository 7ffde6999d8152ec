// TypeScript scaling curves for benchmarks/scaling.py (the same 1x/4x/16x rule, issue 20):
// `reduce` (short turns, no snapshot: the turn-id check) and `snapshots` (a snapshot after
// every event: the snapshot-id check), reduced by the built TypeScript reducer. Prints one
// JSON line per curve: {"curve", "unit", "sizes", "seconds"} with CPU seconds (best of 3).
import { Reducer } from "../ts/dist/src/core/reducer.js";

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

function snapshots(n) {
  const evs = shortTurns(1);
  for (let i = 0; i < n; i++) evs.push(envelope(evs.length, "snapshot_taken", { snapshot_id: `s${i}` }));
  return evs;
}

function cpu(fn) {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t = process.cpuUsage();
    fn();
    const d = process.cpuUsage(t);
    best = Math.min(best, (d.user + d.system) / 1e6);
  }
  return best;
}

const scale = Number(process.argv[2] ?? "1");
const curves = { "ts-reduce": [shortTurns, 10000, "turn"], "ts-snapshots": [snapshots, 5000, "snapshot"] };
for (const [name, [make, base0, unit]] of Object.entries(curves)) {
  const base = Math.max(1, Math.floor(base0 * scale));
  const sizes = [base, 4 * base, 16 * base];
  cpu(() => { const r = new Reducer(null, { copyData: false }); for (const ev of make(base)) r.apply(ev); }); // warm the JIT
  const seconds = sizes.map((n) => {
    const evs = make(n);
    return cpu(() => {
      const r = new Reducer(null, { copyData: false });
      for (const ev of evs) r.apply(ev);
    });
  });
  console.log(JSON.stringify({ curve: name, unit, sizes, seconds }));
}
