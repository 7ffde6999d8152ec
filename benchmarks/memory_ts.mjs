// The TypeScript canonical writers' memory, for benchmarks/memory_bench.py (issue 20: "the
// pretty and canonical writers stream: memory stays within a small multiple of the output").
// Usage: node --expose-gc memory_ts.mjs WRITER [keys], WRITER canonicalDocument (pretty, a
// .json file) or canonicalLine (one JSONL line), one per process (V8 keeps the heap it grew).
// Builds a model.json-shaped value with `keys` float-valued keys (1,000,000 by default), collects, resets the peak RSS (/proc/self/clear_refs),
// then writes the value. Prints one JSON line: {"writer", "output_mib", "peak_mib", "multiple",
// "cpu_s"}, where peak_mib is the peak RSS during the write over the RSS before it (the value
// itself is not counted) and multiple is that over the output's size in memory (one byte per
// character: the output is ASCII).
import { readFileSync, writeFileSync } from "node:fs";

import { canonicalDocument, canonicalLine } from "../ts/dist/src/core/canonical.js";

const writer = process.argv[2];
const write = { canonicalDocument, canonicalLine }[writer];
if (write === undefined) throw new Error("WRITER is canonicalDocument or canonicalLine");
const keys = Number(process.argv[3] ?? 1000000);
const input = {};
for (let i = 0; i < keys; i++) input[`k${i}`] = i + 0.5;
const value = { replies: [{ message: { content: [{ input }] } }] };
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;

{
  globalThis.gc?.();
  writeFileSync("/proc/self/clear_refs", "5"); // the peak RSS starts again from the current RSS
  const before = process.memoryUsage().rss;
  const t = process.cpuUsage();
  const text = write(value);
  const d = process.cpuUsage(t);
  const peak = hwm() - before;
  console.log(JSON.stringify({
    writer,
    output_mib: +(text.length / 2 ** 20).toFixed(1),
    peak_mib: Math.round(peak / 2 ** 20),
    multiple: +(peak / text.length).toFixed(1),
    cpu_s: +((d.user + d.system) / 1e6).toFixed(2),
  }));
}
