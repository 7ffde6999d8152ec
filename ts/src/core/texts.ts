/**
 * Language-neutral texts for messages and logged results (spec/replay.md, "Texts").
 *
 * Every name or value that a message or a logged event quotes is written as its canonical
 * JSON text (RFC 8785): a string `a'b` is quoted as `"a'b"`, a list as `["x","y"]`. No text
 * depends on a language's own printing of values.
 */

import { canonicalLine } from "./canonical.js";

/** The canonical JSON text of `value`; `"<unwritable value>"` when it has none. */
export function quote(value: unknown): string {
  try {
    return canonicalLine(value);
  } catch {
    return '"<unwritable value>"';
  }
}

/** Sort strings by code point, not by UTF-16 unit (the order spec/ means by "sorted"). */
export function codePointCompare(a: string, b: string): number {
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx - cy;
  }
}
