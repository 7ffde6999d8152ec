/**
 * Loading the user's own agent by reference (spec/replay.md section 8, spec/driver-protocol.md
 * 2.5.2): the `agent` field of a `replay` request, `{ref, app_dir}`, for threads-ts.
 *
 * A reference is `<module>#<export>` (the export defaults to `default`): `<module>` is a file
 * path (relative paths are resolved against the first `app_dir` folder, else the working
 * directory) or a package name resolved from there. The export is an agent, or a function of
 * no argument returning one (or a Promise of one): an object with a string `name` and `model`,
 * an optional string `system` and an optional `tools` list of `{name, description?,
 * input_schema?, kind, effect, handler?}` — an {@link AgentSpec} of any copy of this package
 * qualifies. A TypeScript module runs through the loader the user gives Node (for example
 * `NODE_OPTIONS="--import tsx"`). Anything that goes wrong is `CaseError("agent_unavailable")`
 * naming the reference, the module and the first line of the error.
 */

import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { isAbsolute, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

import { CaseError } from "../core/errors.js";
import type { JsonObject } from "../core/strictjson.js";
import { quote } from "../core/texts.js";
import { AgentSpec, BUILTIN_TOOLS, type ToolSpec } from "./agent.js";

export interface AgentRef {
  ref: string;
  app_dir?: string[];
}

function unavailable(ref: string, what: string): CaseError {
  return new CaseError("agent_unavailable", `cannot load the agent ${quote(ref)}: ${what}`);
}

function firstLine(err: unknown): string {
  const e = err instanceof Error ? err : new Error(String(err));
  const line = (e.message.split("\n")[0] ?? "").slice(0, 300);
  return line ? `${e.name}: ${line}` : e.name;
}

const cache = new Map<string, AgentSpec | CaseError>();

function key(ref: AgentRef): string {
  return JSON.stringify([ref.ref, ref.app_dir ?? []]);
}

/** The agent of `ref` when {@link loadAgent} has loaded it; throws its `agent_unavailable` when that failed, or when it was never loaded. */
export function loadedAgent(ref: AgentRef): AgentSpec {
  const found = cache.get(key(ref));
  if (found === undefined) throw unavailable(ref.ref, "it was not loaded before the replay (a bug in the driver)");
  if (found instanceof CaseError) throw found;
  return found;
}

/** Import the agent named by `ref`, once per process per reference; a failure is kept and thrown again. */
export async function loadAgent(ref: AgentRef): Promise<AgentSpec> {
  const k = key(ref);
  if (!cache.has(k)) {
    try {
      cache.set(k, await importAgent(ref));
    } catch (err) {
      cache.set(k, err instanceof CaseError ? err : unavailable(ref.ref, firstLine(err)));
    }
  }
  return loadedAgent(ref);
}

function moduleUrl(spec: string, base: string): string {
  if (spec.startsWith("file:")) return spec;
  if (isAbsolute(spec)) return pathToFileURL(spec).href;
  if (spec.startsWith("./") || spec.startsWith("../")) return pathToFileURL(resolve(base, spec)).href;
  // a package name: found from the base folder as Node finds it from a file there
  return pathToFileURL(createRequire(join(base, "noop.js")).resolve(spec)).href;
}

/** `; a file is named with ./ (./x.mjs#e)` when a bare `spec` names a file of `base` (it was read as a package name), else "". */
function fileHint(spec: string, name: string, base: string): string {
  if (spec.startsWith(".") || spec.startsWith("/") || !existsSync(resolve(base, spec))) return "";
  return `; a file is named with ./ (${quote(`./${spec}#${name}`)})`;
}

async function importAgent(ref: AgentRef): Promise<AgentSpec> {
  const hash = ref.ref.lastIndexOf("#");
  const spec = hash === -1 ? ref.ref : ref.ref.slice(0, hash);
  const name = hash === -1 ? "default" : ref.ref.slice(hash + 1);
  if (!spec || !name) throw unavailable(ref.ref, "threads-ts takes ./file.mjs#export (the export defaults to default)");
  const base = ref.app_dir?.[0] ?? process.cwd();
  let mod: Record<string, unknown>;
  try {
    mod = (await import(moduleUrl(spec, base))) as Record<string, unknown>;
  } catch (err) {
    throw unavailable(ref.ref, `importing ${quote(spec)} failed: ${firstLine(err)}${fileHint(spec, name, base)}`);
  }
  if (!Object.hasOwn(mod, name)) {
    const names = Object.keys(mod).sort();
    const have = names.length ? ` (its exports: ${names.map(quote).join(", ")})` : " (it has no exports)";
    throw unavailable(ref.ref, `${quote(spec)} has no export ${quote(name)}${have}`);
  }
  let value = mod[name];
  if (typeof value === "function" && !agentLike(value)) {
    try {
      value = await (value as () => unknown)();
    } catch (err) {
      throw unavailable(ref.ref, `calling ${quote(name)} failed: ${firstLine(err)}`);
    }
  }
  return asAgent(ref.ref, name, value);
}

function agentLike(value: unknown): value is Record<string, unknown> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as Record<string, unknown>)["name"] === "string" && typeof (value as Record<string, unknown>)["model"] === "string";
}

const KINDS = new Set(["sandbox", "external"]);
const EFFECTS = new Set(["read", "write", "pure"]);

/** An agent-shaped value as this package's {@link AgentSpec}; `agent_unavailable` naming what is wrong otherwise. */
function asAgent(ref: string, name: string, value: unknown): AgentSpec {
  const what = `${quote(name)} is not an agent ({name, model, system?, tools?}) or a function returning one`;
  if (!agentLike(value) || typeof value === "function") throw unavailable(ref, what);
  const system = value["system"] ?? "";
  const rawTools = value["tools"];
  if (typeof system !== "string" || (rawTools !== undefined && !Array.isArray(rawTools))) throw unavailable(ref, what);
  if (rawTools === undefined) return new AgentSpec(value["name"] as string, value["model"] as string, system);
  const tools: ToolSpec[] = [];
  for (const [i, t] of (rawTools as unknown[]).entries()) {
    const tool = t as Record<string, unknown>;
    const ok = typeof t === "object" && t !== null && typeof tool["name"] === "string" && KINDS.has(tool["kind"] as string) && EFFECTS.has(tool["effect"] as string);
    if (!ok || (tool["handler"] !== undefined && typeof tool["handler"] !== "function")) {
      throw unavailable(ref, `tool ${i} of ${quote(name)} needs a string name, kind "sandbox" or "external", effect "read", "write" or "pure", and a function handler if any`);
    }
    const builtin = Object.hasOwn(BUILTIN_TOOLS, tool["name"] as string) ? BUILTIN_TOOLS[tool["name"] as string] : undefined;
    const handler = (tool["handler"] as ToolSpec["handler"]) ?? (tool["kind"] === "sandbox" ? builtin?.handler : undefined);
    tools.push({
      name: tool["name"] as string,
      description: typeof tool["description"] === "string" ? tool["description"] : "",
      input_schema: (tool["input_schema"] ?? { type: "object" }) as JsonObject,
      kind: tool["kind"] as ToolSpec["kind"],
      effect: tool["effect"] as ToolSpec["effect"],
      handler,
    });
  }
  return new AgentSpec(value["name"] as string, value["model"] as string, system, tools);
}
