#!/usr/bin/env node
/**
 * `node scripts/need-deps.mjs`: the first step of `npm run build` and of npm's prepack (so of
 * `npm pack` in a fresh clone). The build compiles the schemas with ajv and the sources with
 * tsc, both locked dev dependencies in node_modules/; without them it would stop with a Node
 * stack trace (ERR_MODULE_NOT_FOUND). Instead this says, in one line, what to run first, and
 * exits 1.
 */
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const missing = ["ajv", "typescript"].filter((name) => {
  try {
    require.resolve(`${name}/package.json`);
    return false;
  } catch {
    return true;
  }
});
if (missing.length > 0) {
  process.stderr.write(
    `threads-cases: run \`npm ci\` in ts/ first: the build needs its locked dependencies (missing: ${missing.join(", ")})\n`,
  );
  process.exit(1);
}
