/**
 * Agents and tools (spec/thread-log.md, `thread_started`).
 *
 * An {@link AgentSpec} is the JSON `agent` of `thread_started`
 * (`{name, model, system, tools: [{name, description, input_schema, kind, effect}]}`) plus a
 * handler per tool for running turns: a sandbox tool's handler gets a {@link ToolContext}
 * (every file operation is recorded as events), an external tool's handler runs only live; a
 * replay answers external calls from the case's stubs. The built-in sandbox tools are
 * {@link BUILTIN_TOOLS}: read_file, write_file, list_files, delete_file.
 */

import type { JsonObject, JsonValue } from "../core/strictjson.js";
import { quote } from "../core/texts.js";

export type ToolKind = "sandbox" | "external";
export type ToolEffect = "read" | "write" | "pure";

/** The brand every copy of this package puts on its ToolResult and BadInput values. */
const BRAND = Symbol.for("threads-cases.brand");

function brand(value: object, kind: string): void {
  Object.defineProperty(value, BRAND, { value: kind, enumerable: false });
}

function branded(value: unknown, kind: string): boolean {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === kind;
}

/**
 * A tool's answer. `instanceof ToolResult` holds for a ToolResult of any copy of this package
 * (the user's agent imports its own copy; spec/replay.md 8.2), as for an AgentSpec.
 */
export class ToolResult {
  constructor(
    readonly content: string | JsonObject[],
    readonly isError = false,
  ) {
    brand(this, "ToolResult");
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, "ToolResult");
  }
}

export type ToolOutput = string | JsonObject[] | ToolResult;

export function asResult(out: ToolOutput): ToolResult {
  return out instanceof ToolResult ? out : new ToolResult(out, false);
}

/** What a sandbox tool handler may do; every call is recorded as events. */
export interface ToolContext {
  read(path: string): Uint8Array;
  write(path: string, data: Uint8Array): void;
  delete(path: string): void;
  list(prefix?: string): string[];
}

/**
 * A built-in tool's input lacks a key or holds a non-string value (spec/replay.md 3.4). Its
 * text is neutral: `bad input for <tool>: <"key"> is missing` or `... is not a string`.
 */
export class BadInput extends Error {
  constructor(readonly tool: string, readonly key: string, readonly problem: string) {
    super(`bad input for ${tool}: ${quote(key)} ${problem}`);
    this.name = "BadInput";
    brand(this, "BadInput");
  }

  /** True for a BadInput of any copy of this package (as for {@link ToolResult}). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return branded(value, "BadInput");
  }
}

export type SandboxHandler = (ctx: ToolContext, input: JsonObject) => ToolOutput;
export type ExternalHandler = (input: JsonObject) => ToolOutput;

export interface ToolSpec {
  name: string;
  description: string;
  input_schema: JsonObject;
  kind: ToolKind;
  effect: ToolEffect;
  handler?: SandboxHandler | ExternalHandler | undefined;
}

export function toolJson(t: ToolSpec): JsonObject {
  return { name: t.name, description: t.description, input_schema: t.input_schema, kind: t.kind, effect: t.effect };
}

/** The string value of `key` of a built-in tool's input (spec/replay.md 3.4). */
function text(tool: string, input: JsonObject, key: string, fallback?: string): string {
  if (!Object.hasOwn(input, key)) {
    if (fallback !== undefined) return fallback;
    throw new BadInput(tool, key, "is missing");
  }
  const value = input[key];
  if (typeof value !== "string") throw new BadInput(tool, key, "is not a string");
  return value;
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const readFile: SandboxHandler = (ctx, input) => {
  const path = text("read_file", input, "path");
  const data = ctx.read(path);
  try {
    return utf8.decode(data);
  } catch {
    return new ToolResult(`${path} is not UTF-8 text (${data.length} bytes)`, true);
  }
};

const writeFile: SandboxHandler = (ctx, input) => {
  const path = text("write_file", input, "path");
  const data = new TextEncoder().encode(text("write_file", input, "content"));
  ctx.write(path, data);
  return `wrote ${data.length} bytes to ${path}`;
};

const listFiles: SandboxHandler = (ctx, input) => ctx.list(text("list_files", input, "prefix", "")).join("\n");

const deleteFile: SandboxHandler = (ctx, input) => {
  const path = text("delete_file", input, "path");
  ctx.delete(path);
  return `deleted ${path}`;
};

const PATH: JsonObject = { type: "string", description: "A relative POSIX path inside the sandbox." };
const textInput = (props: JsonObject, required: string[]): JsonObject => ({ type: "object", properties: props, required });

/** The built-in sandbox tools (spec/replay.md, section 3). */
export const BUILTIN_TOOLS: Readonly<Record<string, ToolSpec>> = {
  read_file: {
    name: "read_file",
    description: "Read a UTF-8 text file from the sandbox.",
    input_schema: textInput({ path: PATH }, ["path"]),
    kind: "sandbox",
    effect: "read",
    handler: readFile,
  },
  write_file: {
    name: "write_file",
    description: "Write a UTF-8 text file in the sandbox, replacing it.",
    input_schema: textInput({ path: PATH, content: { type: "string" } }, ["path", "content"]),
    kind: "sandbox",
    effect: "write",
    handler: writeFile,
  },
  list_files: {
    name: "list_files",
    description: "List the sandbox's files whose path starts with prefix.",
    input_schema: textInput({ prefix: { type: "string" } }, []),
    kind: "sandbox",
    effect: "read",
    handler: listFiles,
  },
  delete_file: {
    name: "delete_file",
    description: "Delete a file from the sandbox.",
    input_schema: textInput({ path: PATH }, ["path"]),
    kind: "sandbox",
    effect: "write",
    handler: deleteFile,
  },
};

/** An agent: `{name, model, system, tools}`; tools default to the four built-ins. */
export class AgentSpec {
  readonly tools: readonly ToolSpec[];

  constructor(
    readonly name: string,
    readonly model: string,
    readonly system = "",
    tools?: readonly ToolSpec[],
  ) {
    this.tools = tools ?? Object.values(BUILTIN_TOOLS);
  }

  /** The `agent` object of `thread_started`. */
  toJson(): JsonObject {
    return { name: this.name, model: this.model, system: this.system, tools: this.tools.map(toolJson) };
  }

  tool(name: string): ToolSpec | undefined {
    return this.tools.find((t) => t.name === name);
  }

  /** Rebuild an agent from its JSON; sandbox built-ins get their handlers back. */
  static fromJson(agent: JsonObject, handlers: Record<string, SandboxHandler | ExternalHandler> = {}): AgentSpec {
    const tools: ToolSpec[] = [];
    for (const raw of (agent["tools"] ?? []) as JsonObject[]) {
      const name = raw["name"] as string;
      const kind = raw["kind"] as ToolKind;
      let handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
      const builtin = Object.hasOwn(BUILTIN_TOOLS, name) ? BUILTIN_TOOLS[name] : undefined;
      if (handler === undefined && builtin !== undefined && kind === "sandbox") handler = builtin.handler;
      tools.push({
        name,
        description: (raw["description"] ?? "") as string,
        input_schema: (raw["input_schema"] ?? {}) as JsonObject,
        kind,
        effect: raw["effect"] as ToolEffect,
        handler,
      });
    }
    return new AgentSpec(agent["name"] as string, agent["model"] as string, (agent["system"] ?? "") as string, tools);
  }
}
