// threads-ts's reduceLog against a plain JSON.parse loop over the same log (issue 37), for
// benchmarks/run.py (`--only ts-reduce`). Usage: node reduce_ts.mjs LOG [rounds]
// Both are run back to back in each round (after one warm-up reduce); prints one JSON line
// with the medians in milliseconds and their ratio, in wall time and in CPU time.
import { readFileSync } from "node:fs";

import { reduceLog } from "../ts/dist/src/core/log.js";

const path = process.argv[2];
const rounds = Number(process.argv[3] ?? 7);
function baseline() {
  for (const line of readFileSync(path, "utf8").split("\n")) if (line) JSON.parse(line);
}
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
reduceLog(path);
const base = [];
const ours = [];
const baseCpu = [];
const oursCpu = [];
// CPU time of the process (user + system, V8's helper threads included) beside the wall time:
// on a shared machine the wall time also measures the other processes' load
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
for (let i = 0; i < rounds; i++) {
  let t = performance.now();
  let c = cpu();
  baseline();
  base.push(performance.now() - t);
  baseCpu.push(cpu() - c);
  t = performance.now();
  c = cpu();
  reduceLog(path);
  ours.push(performance.now() - t);
  oursCpu.push(cpu() - c);
}
console.log(JSON.stringify({
  json_parse_loop_ms: Math.round(median(base)),
  reduce_ms: Math.round(median(ours)),
  ratio: +(median(ours) / median(base)).toFixed(2),
  cpu_ratio: +(median(oursCpu) / median(baseCpu)).toFixed(2),
  aim: "<= 4",
}));
