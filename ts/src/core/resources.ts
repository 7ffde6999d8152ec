/**
 * Where the shared `spec/` and `schemas/` folders live. By default they are found by walking
 * up from this compiled file to the first folder holding both `spec/dialects/` and
 * `schemas/`: the repository root in a checkout, the package root of the npm package (its
 * prepack copies them in), `threads_cases/_data/` for the driver bundled in the Python wheel.
 * `THREADS_CASES_DATA` (a folder holding both, which the client sets for every driver it
 * starts: spec/driver-protocol.md 1.5) comes first, and `THREADS_CASES_SPEC_DIR` (a `spec/`
 * folder) and `THREADS_CASES_SCHEMAS_DIR` override it.
 * Validation does not read `schemas/` at run time: its validators are compiled from the
 * repository's `schemas/` at build time (src/core/schemas.ts).
 */

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

let cachedRoot: string | null | undefined;

function repoRoot(): string | null {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "spec", "dialects")) && existsSync(join(dir, "schemas"))) {
      cachedRoot = dir;
      return dir;
    }
    const parent = dirname(dir);
    if (parent === dir) {
      cachedRoot = null;
      return null;
    }
    dir = parent;
  }
}

function located(envVar: string, sub: string): string {
  const fromEnv = process.env[envVar];
  if (fromEnv) return resolve(fromEnv);
  // the folder the client names for every driver it starts (spec/driver-protocol.md 1.5)
  const named = process.env["THREADS_CASES_DATA"];
  if (named) return join(resolve(named), sub);
  const root = repoRoot();
  if (root === null) {
    throw new Error(`cannot find the threads-cases ${sub}/ folder; set ${envVar}`);
  }
  return join(root, sub);
}

/** The `spec/` folder (dialects and conformance files). */
export function specDir(): string {
  return located("THREADS_CASES_SPEC_DIR", "spec");
}

/** The `schemas/` folder: `THREADS_CASES_SCHEMAS_DIR`, else beside the spec folder. */
export function schemasDir(): string {
  const fromEnv = process.env["THREADS_CASES_SCHEMAS_DIR"];
  if (fromEnv) return resolve(fromEnv);
  if (process.env["THREADS_CASES_SPEC_DIR"] && !process.env["THREADS_CASES_DATA"]) return join(dirname(specDir()), "schemas");
  return located("THREADS_CASES_SCHEMAS_DIR", "schemas");
}

/** The `spec/conformance/` folder. */
export function conformanceDir(): string {
  return join(specDir(), "conformance");
}
