/**
 * The one atomic case writer and the case lock (spec/case-format.md section 6), mirroring
 * `threads_cases/case/writer.py`: the same lock, so Python and TypeScript writers of one case
 * never run at once.
 *
 * The lock is the directory `<dir>/.<name>.lock` made with `mkdir` (atomic; Node has no
 * `flock`), holding `owner.json` `{"host", "pid", "token"}`. A writer waits for a held lock;
 * a stale lock (its owner process on this host is gone, or no owner file after
 * {@link ORPHAN_MS}) is renamed aside (`.<name>.lock.stale-<hex>`, one taker wins) and
 * removed. After {@link LOCK_WAIT_MS} the write is refused with `io_error`.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname, join, resolve } from "node:path";

import { CaseError } from "../core/errors.js";
import { checkCaseName, readCaseFiles } from "./case.js";
import { checkCasePaths } from "./layout.js";
import { checkCaseFiles, checkSecretsMode } from "./save.js";

export const LOCK_WAIT_MS = 120_000;
export const ORPHAN_MS = 5_000;

export type WriteOutcome = "created" | "unchanged" | "replaced";

/** The hint of a refused output inside a case (threads_cases/core/statedir.py says the same). */
export const INSIDE_CASE_HINT =
  "write it outside the case: a case holds only the files of its format, and any other file makes it invalid";

function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null; // ENOTDIR, ELOOP, ...: as Python's os.path.exists, not there
  }
}

/** The case `folder` (absolute) is or is inside: the nearest folder up holding a file case.json. */
function caseAround(folder: string): string | null {
  for (let d = folder; ; d = dirname(d)) {
    if (statOrNull(join(d, "case.json"))?.isFile()) return d;
    if (dirname(d) === d) return null;
  }
}

/**
 * Why `path` cannot be a folder to write in, as `[message, hint]`, or null: it is, or lies
 * inside, a case directory, or it or a folder above exists and is not a folder (the words of
 * Python's `out_folder_problem`; lexical on the resolved absolute path).
 */
export function outFolderProblem(path: string, what: string): [string, string] | null {
  const absolute = resolve(path);
  const found = caseAround(absolute);
  if (found !== null) {
    const where = found === absolute ? "is the case directory" : "is inside the case directory";
    return [`${path}: ${where} ${found}`, INSIDE_CASE_HINT];
  }
  for (let d = absolute; ; d = dirname(d)) {
    const st = statOrNull(d);
    if (st?.isDirectory()) return null;
    if (st) {
      const at = d === absolute ? "is a file" : `${d} is a file`;
      return [`${path}: ${at}, not a folder`, `expected ${what} (it is created when missing)`];
    }
    if (dirname(d) === d) return null;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));
function sleepMs(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

interface Owner {
  host?: unknown;
  pid?: unknown;
  token?: unknown;
}

function owner(lock: string): Owner | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(join(lock, "owner.json"), "utf8"));
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Owner) : undefined;
  } catch {
    return undefined;
  }
}

/** The token of a stale lock, "" for an orphan one, undefined when it is held. */
function stale(lock: string): string | undefined {
  const o = owner(lock);
  if (o === undefined) {
    if (existsSync(join(lock, "owner.json"))) return undefined; // being written
    try {
      return Date.now() - statSync(lock).mtimeMs > ORPHAN_MS ? "" : undefined;
    } catch {
      return undefined; // released meanwhile
    }
  }
  if (o.host !== hostname() || typeof o.pid !== "number" || alive(o.pid)) return undefined;
  return String(o.token ?? "");
}

function takeOver(lock: string, token: string): void {
  const aside = `${lock}.stale-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // another writer took it over first
  }
  const o = owner(aside);
  if (o !== undefined && String(o.token ?? "") !== token) {
    try {
      renameSync(aside, lock); // a new writer's lock, not the stale one: put it back
    } catch {
      // left aside; the next cleanup removes it
    }
    return;
  }
  rmSync(aside, { recursive: true, force: true });
}

/** Run `body` holding the lock of the case `directory/name` (module comment). */
export function withCaseLock<T>(directory: string, name: string, body: () => T): T {
  const lock = join(directory, `.${name}.lock`);
  const token = randomBytes(8).toString("hex");
  const deadline = Date.now() + LOCK_WAIT_MS;
  let pause = 2;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const st = stale(lock);
      if (st !== undefined) {
        takeOver(lock, st);
        continue;
      }
      if (Date.now() > deadline) {
        throw new CaseError("io_error", `the case ${name} is locked by another writer (${lock} exists)`, {
          file: lock,
          hint: "wait for the other save to finish; remove the folder if no save runs",
        });
      }
      sleepMs(pause);
      pause = Math.min(pause * 2, 20);
    }
  }
  try {
    writeFileSync(join(lock, "owner.json"), JSON.stringify({ host: hostname(), pid: process.pid, token }));
    return body();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return (a[i] as number) - (b[i] as number);
  return a.length - b.length;
}

function sameFiles(a: ReadonlyMap<string, Uint8Array>, b: ReadonlyMap<string, Uint8Array>): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined || compareBytes(v, w) !== 0) return false;
  }
  return true;
}

function fsyncPath(path: string): void {
  if (process.platform === "win32") return; // directories cannot be opened for fsync there
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Remove what an interrupted save of `name` left (under the lock: no other writer of this
 * case runs), putting an old case back if a swap was interrupted between its renames. */
function cleanupStrays(directory: string, name: string, target: string): void {
  const entries = readdirSync(directory).sort();
  let olds = entries.filter((e) => e.startsWith(`.${name}.old-`));
  if (!existsSync(target) && olds.length > 0) {
    renameSync(join(directory, olds[0] as string), target);
    olds = olds.slice(1);
  }
  const strays = entries.filter((x) => x.startsWith(`.${name}.tmp-`) || x.startsWith(`.${name}.lock.stale-`));
  for (const e of [...strays, ...olds]) rmSync(join(directory, e), { recursive: true, force: true });
}

function existing(target: string, files: ReadonlyMap<string, Uint8Array>, overwrite: boolean): WriteOutcome | undefined {
  let st: ReturnType<typeof lstatSync> | undefined;
  try {
    st = lstatSync(target);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink() || !st.isDirectory()) {
    throw new CaseError("case_exists", `${target} exists and is not a case directory`, { file: target });
  }
  let old: Map<string, Uint8Array>;
  try {
    old = readCaseFiles(target);
  } catch (err) {
    if (!(err instanceof CaseError)) throw err;
    old = new Map();
  }
  if (sameFiles(old, files)) return "unchanged";
  if (!overwrite) {
    throw new CaseError("case_exists", `a different case is already at ${target}`, {
      file: target,
      hint: "pass --overwrite (overwrite=True) to replace it",
    });
  }
  return undefined;
}

function build(tmp: string, files: ReadonlyMap<string, Uint8Array>): void {
  mkdirSync(tmp);
  const dirs = new Set<string>([tmp]);
  for (const rel of [...files.keys()].sort()) {
    const dest = join(tmp, rel);
    mkdirSync(dirname(dest), { recursive: true });
    dirs.add(dirname(dest));
    const fd = openSync(dest, "wx");
    try {
      const data = files.get(rel) as Uint8Array;
      let at = 0;
      while (at < data.length) at += writeSync(fd, data, at, data.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  for (const d of [...dirs].sort().reverse()) fsyncPath(d);
}

/**
 * Write a case atomically to `directory/name` under the case lock: built beside the target,
 * every file and folder fsynced, then renamed into place. `unchanged` when identical bytes
 * are there; `case_exists` when a different case is there and `overwrite` is false;
 * `io_error` when the case stays locked.
 *
 * First the checks of spec/case-format.md 6.6, the same for every writer, before anything is
 * written: the name (`checkCaseName`), every file's path and every artifact's bytes against
 * its sha256 (`checkCasePaths`; `invalid_request`), `case_too_large`, and `secret_detected`
 * unless `secrets` is `"allow"` (`saveCase`, which ran these checks with its own mode, passes
 * `"allow"`).
 */
export function writeCaseDir(
  directory: string,
  name: string,
  files: ReadonlyMap<string, Uint8Array>,
  overwrite: boolean,
  secrets: string = "refuse",
): WriteOutcome {
  checkCaseName(name);
  checkCasePaths(files);
  checkCaseFiles(files, checkSecretsMode(secrets));
  mkdirSync(directory, { recursive: true });
  const target = join(directory, name);
  return withCaseLock(directory, name, () => {
    cleanupStrays(directory, name, target);
    const outcome = existing(target, files, overwrite);
    if (outcome !== undefined) return outcome;
    const tag = `${process.pid}-${randomBytes(4).toString("hex")}`;
    const tmp = join(directory, `.${name}.tmp-${tag}`);
    build(tmp, files);
    if (!existsSync(target)) {
      renameSync(tmp, target);
      fsyncPath(directory);
      return "created";
    }
    const old = join(directory, `.${name}.old-${tag}`);
    renameSync(target, old);
    renameSync(tmp, target);
    fsyncPath(directory);
    rmSync(old, { recursive: true, force: true });
    return "replaced";
  });
}
