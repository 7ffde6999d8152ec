/**
 * Python's `repr()` and `str()` of JSON values, for messages that must read exactly as the
 * Python reference writes them (tool results such as `unknown tool 'x'` end up in logs, so
 * their bytes matter). A JSON number that is an integer below 2^53 is rendered as a Python
 * int; the strict reader cannot tell `1.0` from `1`, which Python renders as `1.0`.
 */

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function escapeChar(ch: string): string {
  switch (ch) {
    case "\\":
      return "\\\\";
    case "\n":
      return "\\n";
    case "\r":
      return "\\r";
    case "\t":
      return "\\t";
    default:
      break;
  }
  if (ch === " " || !NON_PRINTABLE.test(ch)) return ch;
  const cp = ch.codePointAt(0) ?? 0;
  if (cp < 0x100) return "\\x" + cp.toString(16).padStart(2, "0");
  if (cp < 0x10000) return "\\u" + cp.toString(16).padStart(4, "0");
  return "\\U" + cp.toString(16).padStart(8, "0");
}

/** Python `repr(str)`: single quotes unless the text holds `'` and no `"`. */
export function pyReprString(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    if (ch === quote) out += "\\" + ch;
    else out += escapeChar(ch);
  }
  return out + quote;
}

/** Python `repr(float)`: the shortest round-trip digits, exponent form outside 1e-4..1e16. */
export function pyReprFloat(x: number): string {
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return Object.is(x, -0) ? "-0.0" : "0.0";
  const sign = x < 0 ? "-" : "";
  const [mant = "", expText = "0"] = Math.abs(x).toExponential().split("e");
  const digits = mant.replace(".", "");
  const exp = Number(expText);
  const decpt = exp + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${"0".repeat(-decpt)}${digits}`;
    if (decpt >= digits.length) return `${sign}${digits}${"0".repeat(decpt - digits.length)}.0`;
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const rest = digits.length > 1 ? "." + digits.slice(1) : "";
  const e = Math.abs(exp).toString().padStart(2, "0");
  return `${sign}${digits[0] ?? ""}${rest}e${exp < 0 ? "-" : "+"}${e}`;
}

function reprNumber(x: number): string {
  if (Number.isInteger(x) && !Object.is(x, -0) && Math.abs(x) <= Number.MAX_SAFE_INTEGER) return String(x);
  return pyReprFloat(x);
}

/** Python `repr()` of a JSON value (`None`, `True`, `'text'`, `[1, 2]`, `{'a': 1}`). */
export function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  switch (typeof value) {
    case "boolean":
      return value ? "True" : "False";
    case "number":
      return reprNumber(value);
    case "string":
      return pyReprString(value);
    case "bigint":
      return value.toString();
    case "object":
      if (Array.isArray(value)) return "[" + value.map((v: unknown) => pyRepr(v)).join(", ") + "]";
      return (
        "{" +
        Object.entries(value as Record<string, unknown>)
          .map(([k, v]) => `${pyReprString(k)}: ${pyRepr(v)}`)
          .join(", ") +
        "}"
      );
    default:
      return String(value);
  }
}

/** Python `str()` of a JSON value: a string as is, anything else as its repr. */
export function pyStr(value: unknown): string {
  return typeof value === "string" ? value : pyRepr(value);
}

/** Sort strings by code point (Python's `sorted` on str), not by UTF-16 unit. */
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
