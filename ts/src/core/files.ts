/**
 * Reading files within bounds (mirrors threads_cases/core/files.py; spec/case-format.md,
 * "Reading files"): open without blocking (a FIFO never hangs) and, inside a case, without
 * following a symbolic link; refuse anything but a regular file; check the size with `fstat`
 * before reading and read at most `limit + 1` bytes; a path component over 255 bytes is
 * `invalid_request`. Writing a whole file ({@link replaceFile}) goes through a sibling file
 * moved into place.
 */

import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, rmSync, type Stats, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

import { CaseError, type ReasonCode } from "./errors.js";

/** A thread log or an agent transcript larger than this is refused before it is read. */
export const MAX_LOG_BYTES = 1536 * 1024 * 1024;
/** A case (all its files together), and so any one file of it, is at most this size. */
export const MAX_CASE_BYTES = 512 * 1024 * 1024;

/**
 * A recording of a case (`model.json`, `stubs.json`, `sandbox.json`) is at most this size and
 * holds at most {@link MAX_RECORDING_ENTRIES} replies, calls or reads (`case_too_large`;
 * spec/case-format.md 8.4).
 */
export const MAX_RECORDING_BYTES = 32 * 1024 * 1024;
export const MAX_RECORDING_ENTRIES = 100_000;
/** The list of entries each recording holds. */
export const RECORDING_LISTS: Readonly<Record<string, string>> = { "model.json": "replies", "stubs.json": "calls", "sandbox.json": "reads" };

/** `case_too_large` when the parsed recording `name` holds more than {@link MAX_RECORDING_ENTRIES} entries. */
export function checkRecordingEntries(name: string, value: unknown, file?: string): void {
  const key = Object.hasOwn(RECORDING_LISTS, name) ? RECORDING_LISTS[name] : undefined;
  if (key === undefined || value === null || typeof value !== "object" || Array.isArray(value)) return;
  const entries = (value as Record<string, unknown>)[key];
  if (Array.isArray(entries) && entries.length > MAX_RECORDING_ENTRIES) {
    throw new CaseError("case_too_large", `${entries.length} ${key}, over the limit of ${MAX_RECORDING_ENTRIES}`, {
      ...(file === undefined ? {} : { file }),
      pointer: `/${key}`,
    });
  }
}

/** The most bytes the case file `rel` may hold when `budget` bytes of the case are left. */
export function recordingLimit(rel: string, budget: number): number {
  return Object.hasOwn(RECORDING_LISTS, rel) ? Math.min(budget, MAX_RECORDING_BYTES) : budget;
}

export interface ReadOptions {
  /** Raised when the file cannot be opened. */
  code: ReasonCode;
  /** The most bytes the file may hold. */
  limit: number;
  /** Raised over the limit (default `code`). */
  limitCode?: ReasonCode;
  /** Raised for a FIFO, socket, device or directory (default `invalid_request`). */
  specialCode?: ReasonCode;
  /** Follow a symbolic link (default true; false inside a case). */
  followSymlinks?: boolean;
}

function kind(st: Stats): string {
  if (st.isDirectory()) return "a directory";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  return "not a regular file";
}

/** Open a regular file after checking its kind and size; returns the descriptor (the caller closes it). */
export function openRegular(path: string, options: ReadOptions): number {
  let flags = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
  if (options.followSymlinks === false) flags |= constants.O_NOFOLLOW ?? 0;
  let fd: number;
  try {
    fd = openSync(path, flags);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENAMETOOLONG") {
      throw new CaseError("invalid_request", "a path component is longer than 255 bytes", {
        file: path.length > 200 ? `${path.slice(0, 200)}...` : path,
        hint: "use a shorter file or directory name",
      });
    }
    if (e.code === "ELOOP" && options.followSymlinks === false) throw new CaseError(options.code, "symbolic links are not allowed here", { file: path });
    throw new CaseError(options.code, `cannot read file: ${e.message}`, { file: path });
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new CaseError(options.specialCode ?? "invalid_request", `${kind(st)}, not a regular file`, { file: path, hint: "give the path of a regular file" });
    }
    if (st.size > options.limit) {
      throw new CaseError(options.limitCode ?? options.code, `${st.size} bytes, over the limit of ${options.limit} bytes`, { file: path });
    }
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** The bytes of a regular file of at most `limit` bytes (see {@link openRegular}). */
export function readRegular(path: string, options: ReadOptions): Uint8Array {
  const fd = openRegular(path, options);
  try {
    const size = fstatSync(fd).size;
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const buf = new Uint8Array(Math.max(64 * 1024, Math.min(size + 1, options.limit + 1 - total)));
      let got: number;
      try {
        got = readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") continue;
        throw err;
      }
      if (got === 0) break;
      total += got;
      chunks.push(got === buf.length ? buf : buf.subarray(0, got));
      if (total > options.limit) {
        throw new CaseError(options.limitCode ?? options.code, `more than ${options.limit} bytes (the file grew while it was read)`, { file: path });
      }
    }
    if (chunks.length === 1) return chunks[0] as Uint8Array;
    const out = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  } finally {
    closeSync(fd);
  }
}

/**
 * Write `data` to `target` through a new sibling file renamed over it: a reader sees the old
 * file or the new one, a failed write leaves `target` as it was, and a symlink or hard link
 * at `target` is replaced, never written through.
 */
export function replaceFile(target: string, data: string | Uint8Array): void {
  const tmp = join(dirname(target), `.${basename(target)}.write-${randomBytes(4).toString("hex")}`);
  try {
    writeFileSync(tmp, data, { flag: "wx" });
    renameSync(tmp, target);
  } finally {
    rmSync(tmp, { force: true });
  }
}
