/**
 * threads-cases, TypeScript reference implementation. The normative text is under spec/:
 * strict and canonical JSON (spec/strict-json.md), dialects (spec/dialects.md), thread logs
 * (spec/thread-log.md), the reducer (spec/reducer.md), reason codes (spec/reason-codes.md),
 * matchers (spec/matchers.md), replay (spec/replay.md), cases (spec/case-format.md) and the
 * driver protocol (spec/driver-protocol.md).
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
export {
  ENVELOPE_KEYS,
  MATCHER_KEYS,
  diffValues,
  differences,
  explain,
  findAll,
  matchInOrder,
  matches,
  nearest,
  renderDifference,
  validateMatcher,
  valueMatches,
  valuesEqual,
} from "./matchers.js";
export type { Difference, EventLike, Matcher } from "./matchers.js";
export { AgentSpec, BUILTIN_TOOLS, BadInput, ToolResult } from "./agent.js";
export type { ExternalHandler, SandboxHandler, ToolContext, ToolEffect, ToolKind, ToolOutput, ToolSpec } from "./agent.js";
export { ScriptedModel, StopError, normalizeReply, requestSha256, textReply, toolReply } from "./model.js";
export type { Model, Reply, Usage } from "./model.js";
export { DirectorySandbox, FakeSandbox, FileMissing, checkPath, isDeviceName, sha256Hex } from "./sandbox.js";
export type { SandboxProvider } from "./sandbox.js";
export { ACTOR, ArtifactStore, Clock, Recorder, STEP_LIMIT, blockEgress, buildRequest, formatTs, parseTs, runTurn } from "./runtime.js";
export type { TurnOutcome } from "./runtime.js";
export { CASE_FORMAT, Case, DEFAULT_IMPLEMENTATIONS, checkCaseName, fingerprint, finishCaseFiles, loadCase, readCaseFiles, writeCaseDir } from "./case.js";
export type { CaseExpectation, WriteOutcome } from "./case.js";
export { StubBook, checkSupply, replayCase, restoreSandbox } from "./replay.js";
export type { ReplayOptions, ReplayResult, ReplayStop } from "./replay.js";
export { buildCaseFiles, checkExpectation, checkImplementations, saveCase } from "./save.js";
export type { BuildCaseOptions, SaveResult, SavedCase } from "./save.js";
export { Thread } from "./thread.js";
export { handleRequest, serve } from "./driver.js";
export { version } from "./version.js";
