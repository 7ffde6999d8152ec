#!/usr/bin/env node
// Runs the compiled tests (dist/test/) with node's test runner, one test file per core.
// Node 20's runner defaults to one file fewer than the cores, which on a 2-core machine runs
// the files one at a time; each file is a process of its own, so they can share every core.
// `--verbose` prints every test (the spec reporter) instead of the one-line summary.
import { spawnSync } from "node:child_process";
import { availableParallelism } from "node:os";

const verbose = process.argv.includes("--verbose");
const reporter = verbose ? "spec" : "./test/summary-reporter.mjs";
const run = spawnSync(
  process.execPath,
  ["--test", `--test-concurrency=${availableParallelism()}`, `--test-reporter=${reporter}`, "dist/test/"],
  { stdio: "inherit" },
);
process.exit(run.status ?? 1);
