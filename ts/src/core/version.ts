/** The package version, read from ts/package.json (found by walking up from this file). */

import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

let cached: string | undefined;

export function version(): string {
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
      if (pkg.name === "threads-cases-ts" && typeof pkg.version === "string") {
        cached = pkg.version;
        return cached;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error("cannot find threads-cases-ts package.json");
    dir = parent;
  }
}
