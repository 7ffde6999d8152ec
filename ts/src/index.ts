/**
 * threads-cases, TypeScript reference implementation. The normative text is under spec/:
 * strict and canonical JSON (spec/strict-json.md), dialects (spec/dialects.md), thread logs
 * (spec/thread-log.md), the reducer (spec/reducer.md) and reason codes (spec/reason-codes.md).
 */

export { CaseError, EXIT_STATUS, REASON_HINTS, pointerJoin } from "./errors.js";
export type { CaseErrorOptions, Location, ReasonCode } from "./errors.js";
export {
  MAX_DEPTH,
  MAX_LINE_BYTES,
  MAX_SAFE_INTEGER,
  iterJsonl,
  iterLines,
  parse,
  parse as parseJson,
  parseString,
  readJsonFile,
} from "./strictjson.js";
export type { JsonObject, JsonValue, LineItem, LineOptions, LineSource, ParseOptions } from "./strictjson.js";
export { canonicalDocument, canonicalJsonl, canonicalLine } from "./canonical.js";
export { CANONICAL, Dialect, dialectNames, getDialect, resolveDialect } from "./dialects.js";
export type { DialectLike } from "./dialects.js";
export { schemaProblems, validator } from "./schemas.js";
export type { SchemaProblem } from "./schemas.js";
export { LogChecker, checkEvents, encodeLog, readLog, reduce, reduceEvents, reduceLog } from "./log.js";
export type { ReadOptions } from "./log.js";
export { RESTORED_KEYS, Reducer, deepCopy, initialState, reduceEnvelopes } from "./reducer.js";
export type { Artifact, Envelope, Message, ReducerOptions, State, Status, Turn } from "./reducer.js";
export { conformanceDir, schemasDir, specDir } from "./resources.js";
