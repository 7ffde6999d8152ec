/** Shared test helpers. */

import { readdirSync } from "node:fs";
import { join } from "node:path";

import { conformanceDir } from "../src/index.js";

/** The case directories of spec/conformance/cases/, sorted. */
export function conformanceCases(): string[] {
  const dir = join(conformanceDir(), "cases");
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(dir, e.name))
    .sort();
}
