/**
 * The nesting limit of an event (spec/thread-log.md 5.1a), as threads_cases/core/depth.py.
 *
 * Every JSON text is at most {@link MAX_DEPTH} (256) levels deep; an event envelope at most
 * {@link MAX_EVENT_DEPTH} = 256 - 8 = 248 (the envelope is level 1), so every message that carries
 * an event or a value made from one (a `write_case` request, a `replay` or `reduce` answer,
 * `model.json`, `expected.<d>.json`) fits in 256 levels.
 */

import { MAX_DEPTH } from "./strictjson.js";
import { codePointCompare } from "./texts.js";

/** Levels every protocol message and case file may add around an event. */
export const EVENT_MARGIN = 8;
/** The deepest an event envelope may nest (the envelope itself is level 1). */
export const MAX_EVENT_DEPTH = MAX_DEPTH - EVENT_MARGIN;

/** A cheap test on a value's JSON text: false means it cannot nest deeper than `limit`. */
export function maybeTooDeep(text: string | Uint8Array, limit: number = MAX_EVENT_DEPTH): boolean {
  let n = 0;
  if (typeof text === "string") {
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x5b || c === 0x7b) n++;
    }
  } else {
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === 0x5b || c === 0x7b) n++;
    }
  }
  return n > limit;
}

/**
 * The path of the first container nested deeper than `limit` levels (`value` being at `level`),
 * object keys in code point order, array items by index; null when the value fits.
 */
export function tooDeep(value: unknown, limit: number = MAX_EVENT_DEPTH, level = 1): Array<string | number> | null {
  if (value === null || typeof value !== "object") return null;
  if (level > limit) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = tooDeep(value[i], limit, level + 1);
      if (found !== null) return [i, ...found];
    }
    return null;
  }
  const obj = value as Record<string, unknown>;
  for (const key of Object.keys(obj).sort(codePointCompare)) {
    const found = tooDeep(obj[key], limit, level + 1);
    if (found !== null) return [key, ...found];
  }
  return null;
}

export function depthMessage(limit: number = MAX_EVENT_DEPTH): string {
  return `an event nests deeper than ${limit} levels (the limit that lets every message carrying it fit in ${MAX_DEPTH})`;
}
