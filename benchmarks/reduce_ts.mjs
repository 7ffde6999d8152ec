// threads-ts's reduceLog against a plain JSON.parse loop over the same log (issue 37), for
// benchmarks/run.py (`--only ts-reduce`). Usage: node reduce_ts.mjs LOG [rounds]
// Both are run back to back in each round (after one warm-up reduce); prints one JSON line
// with the medians in milliseconds and their ratio.
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
for (let i = 0; i < rounds; i++) {
  let t = performance.now();
  baseline();
  base.push(performance.now() - t);
  t = performance.now();
  reduceLog(path);
  ours.push(performance.now() - t);
}
console.log(JSON.stringify({
  json_parse_loop_ms: Math.round(median(base)),
  reduce_ms: Math.round(median(ours)),
  ratio: +(median(ours) / median(base)).toFixed(2),
  aim: "<= 4",
}));
