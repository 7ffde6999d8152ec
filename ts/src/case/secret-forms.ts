/**
 * The decoded forms of a text that secrets are also looked for in (spec/case-format.md
 * 10.2): JSON string escapes, URL percent-encoding and base64 / base64url runs, as
 * `threads_cases/case/secret_forms.py` decodes them. Each decoder gives the decoded text and
 * a map back to the text it came from, so a secret found in a decoded form is a span of the
 * original covering every character that encodes it. Positions are UTF-16 units (Python
 * uses code points and maps the same way: both give the same redacted text).
 */

const SIMPLE: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
const HEX4 = /^[0-9A-Fa-f]{4}$/u;

/** A decoded text and its map back (see the Python `Decoded`). */
export interface Decoded {
  text: string;
  starts: number[];
  sources: [number, number][];
  copied: boolean[];
}

function segmentOf(d: Decoded, at: number): number {
  let lo = 0;
  let hi = d.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((d.starts[mid] as number) <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The span of the original text that decoded `[a, b)` (`b > a`) came from. */
export function sourceSpan(d: Decoded, a: number, b: number): [number, number] {
  const i = segmentOf(d, a);
  const j = segmentOf(d, b - 1);
  const [si] = d.sources[i] as [number, number];
  const [sj, ej] = d.sources[j] as [number, number];
  const start = si + (d.copied[i] ? a - (d.starts[i] as number) : 0);
  const end = d.copied[j] ? sj + (b - (d.starts[j] as number)) : ej;
  return [start, end];
}

class Builder {
  parts: string[] = [];
  starts: number[] = [];
  sources: [number, number][] = [];
  copied: boolean[] = [];
  length = 0;
  changed = false;
  constructor(private readonly text: string) {}

  copy(a: number, b: number): void {
    if (a < b) this.add(this.text.slice(a, b), a, b, true);
  }

  decode(chars: string, a: number, b: number): void {
    this.changed = true;
    this.add(chars, a, b, false);
  }

  private add(chars: string, a: number, b: number, copied: boolean): void {
    this.parts.push(chars);
    this.starts.push(this.length);
    this.sources.push([a, b]);
    this.copied.push(copied);
    this.length += chars.length;
  }

  done(): Decoded | null {
    if (!this.changed) return null;
    return { text: this.parts.join(""), starts: this.starts, sources: this.sources, copied: this.copied };
  }
}

function unicodeEscape(text: string, j: number): [string, number] | null {
  const hex = text.slice(j + 2, j + 6);
  if (!HEX4.test(hex)) return null;
  const unit = parseInt(hex, 16);
  if (unit < 0xd800 || unit > 0xdfff) return [String.fromCharCode(unit), j + 6];
  const lowHex = text.slice(j + 8, j + 12);
  if (unit <= 0xdbff && text.startsWith("\\u", j + 6) && HEX4.test(lowHex)) {
    const low = parseInt(lowHex, 16);
    if (low >= 0xdc00 && low <= 0xdfff) return [String.fromCharCode(unit, low), j + 12];
  }
  return null; // a lone surrogate is not decoded
}

/** `text` with every JSON string escape decoded, left to right; null when none was. */
export function jsonUnescaped(text: string): Decoded | null {
  if (!text.includes("\\")) return null;
  const out = new Builder(text);
  let i = 0;
  for (let j = text.indexOf("\\", i); j >= 0; j = text.indexOf("\\", i)) {
    out.copy(i, j);
    const c = text.slice(j + 1, j + 2);
    if (c !== "" && Object.hasOwn(SIMPLE, c)) {
      out.decode(SIMPLE[c] as string, j, j + 2);
      i = j + 2;
      continue;
    }
    const got = c === "u" ? unicodeEscape(text, j) : null;
    if (got !== null) {
      out.decode(got[0], j, got[1]);
      i = got[1];
      continue;
    }
    out.copy(j, j + 1);
    i = j + 1;
  }
  out.copy(i, text.length);
  return out.done();
}

/** `text` with every `%XX` of an ASCII character (`%00`-`%7F`) decoded; null when none was. */
export function urlDecoded(text: string): Decoded | null {
  if (!text.includes("%")) return null;
  const out = new Builder(text);
  let i = 0;
  for (const m of text.matchAll(/%[0-7][0-9A-Fa-f]/gu)) {
    const at = m.index as number;
    out.copy(i, at);
    out.decode(String.fromCharCode(parseInt(m[0].slice(1), 16)), at, at + 3);
    i = at + 3;
  }
  out.copy(i, text.length);
  return out.done();
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const runs = new Map<number, RegExp>();

/** `[start, end, decoded]` of every base64 / base64url run of at least `minLength`
 * characters that decodes to UTF-8 text (as `base64_runs` in Python). */
export function base64Runs(text: string, minLength: number): [number, number, string][] {
  if (text.length < minLength) return [];
  let rx = runs.get(minLength);
  if (rx === undefined) {
    // a maximal run: left to right, a match only starts where a run starts (no lookbehind)
    rx = new RegExp(`[A-Za-z0-9+/_-]{${minLength},}={0,2}`, "gu");
    runs.set(minLength, rx);
  }
  const out: [number, number, string][] = [];
  for (const m of text.matchAll(rx)) {
    const core = m[0].replace(/=+$/u, "");
    if (core.length % 4 === 1) continue;
    const std = core.replaceAll("-", "+").replaceAll("_", "/");
    const data = Buffer.from(std + "=".repeat((4 - (std.length % 4)) % 4), "base64");
    try {
      const at = m.index as number;
      out.push([at, at + m[0].length, utf8.decode(data)]);
    } catch {
      continue;
    }
  }
  return out;
}
