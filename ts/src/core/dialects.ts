/**
 * Dialects: how each implementation spells the envelope and the state (spec/dialects.md).
 *
 * A dialect is data, `spec/dialects/<name>.json`, renaming only the top-level keys of an event
 * envelope and of a state; `data` and every state value are the same in all dialects. One
 * generic codec reads every file, so adding a language means adding a file.
 */

import { readdirSync } from "node:fs";
import { join } from "node:path";

import { CaseError } from "./errors.js";
import { specDir } from "./resources.js";
import { readJsonFile, setOwn, type JsonObject, type JsonValue } from "./strictjson.js";

/** The canonical dialect: every key as the spec names it. */
export const CANONICAL = "threads-py";

type Table = Readonly<Record<string, string>>;

export class Dialect {
  private readonly envelopeBack: Map<string, string>;
  private readonly stateBack: Map<string, string>;

  constructor(
    readonly name: string,
    /** canonical key -> this dialect's key, for envelopes */
    readonly envelope: Table,
    /** canonical key -> this dialect's key, for states */
    readonly state: Table,
  ) {
    this.envelopeBack = new Map(Object.entries(envelope).map(([k, v]) => [v, k]));
    this.stateBack = new Map(Object.entries(state).map(([k, v]) => [v, k]));
  }

  private encode<T extends JsonObject>(value: T, table: Table): JsonObject {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) setOwn(out, Object.hasOwn(table, k) ? (table[k] as string) : k, v);
    return out;
  }

  private decode(value: JsonObject, table: Table, back: Map<string, string>, what: string): JsonObject {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      const canonical = back.get(k);
      if (canonical === undefined && Object.hasOwn(table, k)) {
        throw new CaseError(
          "log_invalid",
          `${what} key '${k}' is not spelled that way in dialect ${this.name}; it is '${table[k]}'`,
          { pointer: "/" + k.replace(/~/g, "~0").replace(/\//g, "~1"), hint: `the file is in another dialect than ${this.name}; check --dialect` },
        );
      }
      setOwn(out, canonical ?? k, v);
    }
    return out;
  }

  /** Canonical envelope -> this dialect's envelope. */
  encodeEvent(event: JsonObject): JsonObject {
    return this.encode(event, this.envelope);
  }

  /** This dialect's envelope -> canonical; `log_invalid` for a key spelled as another dialect spells it. */
  decodeEvent(event: JsonObject): JsonObject {
    return this.decode(event, this.envelope, this.envelopeBack, "envelope");
  }

  /** Canonical state -> this dialect's state. */
  encodeState(state: JsonObject): JsonObject {
    return this.encode(state, this.state);
  }

  /** This dialect's state -> canonical (`log_invalid` on a wrongly spelled key). */
  decodeState(state: JsonObject): JsonObject {
    return this.decode(state, this.state, this.stateBack, "state");
  }
}

/** Names of the dialects under spec/dialects/, sorted. */
export function dialectNames(): string[] {
  return readdirSync(join(specDir(), "dialects"))
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

const cache = new Map<string, Dialect>();

function stringTable(value: JsonValue | undefined, what: string, file: string): Record<string, string> {
  if (value === undefined) return {};
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new CaseError("json_invalid", `${what} must be an object`, { file, pointer: "/" + what });
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== "string") throw new CaseError("json_invalid", `${what}.${k} must be a string`, { file, pointer: `/${what}/${k}` });
    out[k] = v;
  }
  return out;
}

/** Load `spec/dialects/<name>.json`. Throws `CaseError("dialect_unknown")` for an unknown name. */
export function getDialect(name: string): Dialect {
  const hit = cache.get(name);
  if (hit !== undefined) return hit;
  const names = dialectNames();
  if (!names.includes(name)) {
    throw new CaseError("dialect_unknown", `unknown dialect '${name}'; known: ${names.join(", ")}`);
  }
  const file = join(specDir(), "dialects", `${name}.json`);
  const raw = readJsonFile(file);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    throw new CaseError("json_invalid", "a dialect file holds an object", { file, pointer: "" });
  }
  const dialect = new Dialect(
    typeof raw["name"] === "string" ? raw["name"] : name,
    stringTable(raw["envelope"], "envelope", file),
    stringTable(raw["state"], "state", file),
  );
  cache.set(name, dialect);
  return dialect;
}

/** A dialect given by name or as a loaded codec. */
export type DialectLike = string | Dialect;

export function resolveDialect(dialect: DialectLike = CANONICAL): Dialect {
  return typeof dialect === "string" ? getDialect(dialect) : dialect;
}
