/**
 * Sandbox bytes a log knows only by hash, supplied from a folder (`save --sandbox DIR`,
 * spec/case-format.md 5.9). Mirrors Python's `threads_cases/case/sandbox_files.py`.
 *
 * A log may record a sandbox file by its sha256 alone (`sandbox_read`/`sandbox_wrote` with
 * `"artifact": null`). The case then holds it hash-only (spec/replay.md 2.3) unless the bytes
 * are given: {@link supplySandboxBytes} reads `DIR/<path>` for each such file the replay
 * starts with (the prefix state's files, then the turn's reads) and adds the bytes to the
 * artifact store, after checking them against the recorded sha256.
 */

import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, sep } from "node:path";

import { CaseError } from "../core/errors.js";
import { Reducer, type Envelope } from "../core/reducer.js";
import { codePointCompare } from "../core/texts.js";
import { ArtifactStore } from "../reference/runtime.js";
import { checkPath, sha256Hex } from "../reference/sandbox.js";

/**
 * `[path, sha256]` of each file the replay of the turn after `at` starts with: the prefix
 * state's files (by path, in code point order), then the turn's reads before any write of the
 * same path, in log order, up to the turn's end. Empty when `at` is not in the log (the save
 * then refuses with `event_not_found`).
 */
export function wantedSandboxFiles(events: readonly Envelope[], at: string): [string, string][] {
  const idx = events.findIndex((e) => e.event_id === at);
  if (idx === -1) return [];
  const reducer = new Reducer();
  for (const e of events.slice(0, idx + 1)) reducer.apply(e);
  const files = reducer.state.sandbox.files;
  const out: [string, string][] = Object.keys(files)
    .sort(codePointCompare)
    .filter((p) => Boolean(files[p]))
    .map((p) => [p, files[p] as string]);
  const written = new Set<string>();
  for (const e of events.slice(idx + 1)) {
    const d = e.data;
    if (e.type === "sandbox_wrote") written.add(d["path"] as string);
    else if (e.type === "sandbox_read" && !written.has(d["path"] as string) && d["sha256"]) out.push([d["path"] as string, d["sha256"] as string]);
    else if (e.type === "turn_completed" || e.type === "turn_failed") break;
  }
  return out;
}

/**
 * A path as Python's `str(pathlib.PurePosixPath(text))` writes it (the form the Python
 * writer's messages name the folder in): repeated slashes and `.` segments dropped, no
 * trailing slash, `.` for the empty path, and a leading `//` kept as POSIX allows.
 */
export function posixPathText(text: string): string {
  const root = text.startsWith("//") && !text.startsWith("///") ? "//" : text.startsWith("/") ? "/" : "";
  const parts = text.split("/").filter((s) => s !== "" && s !== ".");
  const out = root + parts.join("/");
  return out === "" ? "." : out;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The real path of `root/path` when it is a regular file inside `root` (symlinks followed), else null. */
function fileInside(root: string, path: string): string | null {
  let real: string;
  try {
    real = realpathSync(join(root, path));
    if (!statSync(real).isFile()) return null;
  } catch {
    return null; // missing, a symlink loop, unreadable: the file stays hash-only
  }
  const prefix = root.endsWith(sep) ? root : root + sep;
  return real.startsWith(prefix) ? real : null;
}

/**
 * A store holding `store`'s bytes plus, for each file the replay of the turn after `at`
 * starts with ({@link wantedSandboxFiles}) whose bytes `store` lacks, the bytes of
 * `directory/<path>` when that file exists (spec/case-format.md 5.9). A file absent from
 * `directory`, or one that resolves (through a symlink) outside it, stays hash-only
 * (3.7.1); `store` itself is not changed.
 *
 * Throws `CaseError("invalid_request")` when `directory` is not a folder ("--sandbox folder
 * DIR does not exist"), when a path the log records is not a safe sandbox path
 * ({@link checkPath}), or when a file's bytes do not hash to the recorded sha256 ("--sandbox
 * DIR: PATH has sha256 GOT, but the log recorded SHA", with `file` the file read). A file
 * that exists but cannot be read throws the file system's error (`io_error` from saveCase).
 */
export function supplySandboxBytes(events: readonly Envelope[], at: string, store: ArtifactStore, directory: string): ArtifactStore {
  const shown = posixPathText(directory);
  if (!existsSync(shown)) throw new CaseError("invalid_request", `--sandbox folder ${shown} does not exist`);
  if (!isDir(shown)) {
    throw new CaseError("invalid_request", `--sandbox ${shown} is not a folder`, {
      hint: "pass the folder holding the sandbox's files, not one of the files",
    });
  }
  const root = realpathSync(shown);
  const out = new ArtifactStore(store.blobs);
  for (const [path, sha] of wantedSandboxFiles(events, at)) {
    if (out.get(sha) !== undefined) continue;
    const target = fileInside(root, checkPath(path));
    if (target === null) continue;
    const data = new Uint8Array(readFileSync(target));
    const got = sha256Hex(data);
    if (got !== sha) {
      throw new CaseError("invalid_request", `--sandbox ${shown}: ${path} has sha256 ${got}, but the log recorded ${sha}`, {
        file: target,
        hint: "give the folder holding the files as they were when the turn ran",
      });
    }
    out.put(data);
  }
  return out;
}
