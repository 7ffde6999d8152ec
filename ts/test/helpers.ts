/** Shared test helpers. */

import { readdirSync } from "node:fs";
import { join } from "node:path";

import { conformanceDir } from "../src/index.js";

/** The case directories of spec/conformance/replay/ and cases/, sorted within each (conformance.md 2.5, 2.14). */
export function conformanceCases(): string[] {
  return ["replay", "cases"].flatMap((area) => {
    const dir = join(conformanceDir(), area);
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name))
      .sort();
  });
}
