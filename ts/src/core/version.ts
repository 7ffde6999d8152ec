/**
 * The package version: inlined by the bundler in the single-file driver shipped in the Python
 * wheel (scripts/bundle.mjs), else read from the `threads-cases` package.json found by walking
 * up from this file (the checkout's ts/package.json, or the installed npm package's).
 */

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Replaced by a string literal in the bundle (esbuild `define`); undeclared elsewhere. */
declare const THREADS_CASES_BUNDLED_VERSION: string | undefined;

let cached: string | undefined;

export function version(): string {
  if (cached !== undefined) return cached;
  if (typeof THREADS_CASES_BUNDLED_VERSION === "string") {
    cached = THREADS_CASES_BUNDLED_VERSION;
    return cached;
  }
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "threads-cases" && typeof pkg.version === "string") {
        cached = pkg.version;
        return cached;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find the threads-cases package.json");
    dir = parent;
  }
}
