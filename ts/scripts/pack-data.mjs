#!/usr/bin/env node
/**
 * `node scripts/pack-data.mjs copy|clean`: the npm package carries the shared spec/ and
 * schemas/ folders it reads at run time (src/core/resources.ts finds them beside the package
 * root). `copy` (npm's prepack) copies ../spec and ../schemas into ts/; `clean` (postpack, and
 * before every build) removes the copies, so a checkout always reads the repository's own
 * folders, never a stale copy. Generated, never committed (.gitignore).
 */
import { cpSync, existsSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ts = dirname(dirname(fileURLToPath(import.meta.url)));
const repo = dirname(ts);
const FOLDERS = ["spec", "schemas"];
const action = process.argv[2];

if (action === "copy") {
  for (const name of FOLDERS) {
    const from = join(repo, name);
    if (!existsSync(from)) {
      process.stderr.write(`pack-data: ${from} is missing (run npm pack inside the repository)\n`);
      process.exit(1);
    }
    rmSync(join(ts, name), { recursive: true, force: true });
    cpSync(from, join(ts, name), { recursive: true });
  }
} else if (action === "clean") {
  for (const name of FOLDERS) rmSync(join(ts, name), { recursive: true, force: true });
} else {
  process.stderr.write("usage: node scripts/pack-data.mjs copy|clean\n");
  process.exit(2);
}
