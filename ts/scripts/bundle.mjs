#!/usr/bin/env node
/**
 * `node scripts/bundle.mjs OUTFILE`: the threads-ts driver as ONE self-contained ES module
 * (ajv and every source module inlined; Node.js built-ins only), for the Python wheel
 * (hatch_build.py puts it at threads_cases/_data/ts/threads-ts.mjs). It reads spec/ and
 * schemas/ at run time from the first ancestor folder holding both (src/core/resources.ts):
 * in the wheel, threads_cases/_data/. The version is inlined from package.json. The schema
 * validators are generated first (scripts/gen-validators.mjs): the wheel is built from the
 * sdist, which does not carry src/core/validators.generated.js.
 */
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { build } from "esbuild";

import { writeValidators } from "./gen-validators.mjs";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const outfile = process.argv[2];
if (!outfile) {
  process.stderr.write("usage: node scripts/bundle.mjs OUTFILE\n");
  process.exit(2);
}
await writeValidators();
const pkg = JSON.parse(readFileSync(join(here, "package.json"), "utf8"));
await build({
  // the protocol module serves when it is the program itself (its isMain check)
  entryPoints: [join(here, "src", "protocol", "driver.ts")],
  outfile: resolve(outfile),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  legalComments: "inline",
  banner: { js: `// threads-ts driver ${pkg.version} (threads-cases), bundled with esbuild` },
  define: { THREADS_CASES_BUNDLED_VERSION: JSON.stringify(pkg.version) },
  logLevel: "warning",
});
