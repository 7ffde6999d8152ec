/**
 * threads-cases, TypeScript reference implementation. The normative text is under spec/:
 * strict and canonical JSON (spec/strict-json.md), dialects (spec/dialects.md), thread logs
 * (spec/thread-log.md), the reducer (spec/reducer.md), reason codes (spec/reason-codes.md),
 * matchers (spec/matchers.md), replay (spec/replay.md), cases (spec/case-format.md) and the
 * driver protocol (spec/driver-protocol.md).
 */

export { CaseError, EXIT_STATUS, REASON_HINTS, pointerJoin } from "./core/errors.js";
export type { CaseErrorOptions, Location, ReasonCode } from "./core/errors.js";
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
} from "./core/strictjson.js";
export type { JsonObject, JsonValue, LineItem, LineOptions, LineSource, ParseOptions } from "./core/strictjson.js";
export { canonicalDocument, canonicalJsonl, canonicalLine, emitCanonicalLine } from "./core/canonical.js";
export { CANONICAL, Dialect, dialectNames, getDialect, resolveDialect } from "./core/dialects.js";
export type { DialectLike } from "./core/dialects.js";
export { schemaProblems, validator } from "./core/schemas.js";
export type { SchemaProblem } from "./core/schemas.js";
export { LogChecker, checkEvents, encodeLog, readLog, reduce, reduceEvents, reduceLog } from "./core/log.js";
export type { ReadOptions } from "./core/log.js";
export { RESTORED_KEYS, Reducer, deepCopy, initialState, reduceEnvelopes } from "./core/reducer.js";
export type { Artifact, Envelope, Message, ReducerOptions, State, Status, Turn } from "./core/reducer.js";
export { conformanceDir, schemasDir, specDir } from "./core/resources.js";
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
} from "./core/matchers.js";
export type { Difference, EventLike, Matcher } from "./core/matchers.js";
export { AgentSpec, BUILTIN_TOOLS, BadInput, ToolResult } from "./reference/agent.js";
export type { ExternalHandler, SandboxHandler, ToolContext, ToolEffect, ToolKind, ToolOutput, ToolSpec } from "./reference/agent.js";
export { ScriptedModel, StopError, normalizeReply, requestSha256, textReply, toolReply } from "./reference/model.js";
export { RequestHasher } from "./reference/request.js";
export type { Model, Reply, Usage } from "./reference/model.js";
export { DirectorySandbox, FakeSandbox, FileMissing, checkPath, isDeviceName, sha256Hex } from "./reference/sandbox.js";
export type { SandboxProvider } from "./reference/sandbox.js";
export { ACTOR, ArtifactStore, Clock, HandlerMissing, Recorder, STEP_LIMIT, blockEgress, buildRequest, formatTs, parseTs, runTurn } from "./reference/runtime.js";
export type { TurnOutcome } from "./reference/runtime.js";
export { CASE_FORMAT, DEFAULT_DIALECTS, DEFAULT_IMPLEMENTATIONS, READ_FORMATS, RECORDING_FORMAT, checkCaseName, fingerprint, finishCaseFiles, readCaseFiles, upgradedMeta } from "./case/case.js";
export { Case, artifactRefs, openCase } from "./case/loader.js";
export { withCaseLock, writeCaseDir, type WriteOutcome } from "./case/writer.js";
export type { CaseExpectation } from "./case/case.js";
export { StubBook, checkSupply, replayCase, restoreSandbox } from "./reference/replay.js";
export type { ReplayOptions, ReplayResult, ReplayStop } from "./reference/replay.js";
export { ABSENT, Divergence, firstDifference, replayedRequests, requestDivergence, shorten } from "./case/divergence.js";
export { buildCaseFiles, checkDialects, checkExpectation, checkImplementations, saveCase } from "./case/save.js";
export type { BuildCaseOptions, SaveCaseOptions, SaveError, SaveResult, SavedCase } from "./case/save.js";
export { supplySandboxBytes } from "./case/sandbox-files.js";
export { Thread } from "./reference/thread.js";
export { handleRequest, prepareLine, serve } from "./protocol/driver.js";
export { loadAgent, loadedAgent, type AgentRef } from "./reference/agent-ref.js";
export { version } from "./core/version.js";
export { MAX_CASE_BYTES, MAX_LOG_BYTES, openRegular, readRegular, type ReadOptions as BoundedReadOptions } from "./core/files.js";
export { EVENT_MARGIN, MAX_EVENT_DEPTH, tooDeep } from "./core/depth.js";
