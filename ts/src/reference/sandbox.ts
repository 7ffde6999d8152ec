/**
 * Sandboxes: where an agent's sandbox tools read and write files (spec/replay.md, section 2).
 *
 * A {@link SandboxProvider} holds files under relative POSIX paths (spec/thread-log.md
 * section 6). {@link FakeSandbox} keeps them in memory and has no network at all, so a case
 * saved from it is portable and its replay cannot reach the outside world;
 * {@link DirectorySandbox} is a real folder and cannot promise that.
 */

import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, rmSync, unlinkSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

import { CaseError } from "../core/errors.js";
import { replaceFile } from "../core/files.js";
import { quote } from "../core/texts.js";
import { StopError } from "./model.js";

/** A missing file (Python's FileNotFoundError); the tool result is `no such file: <path>`. */
export class FileMissing extends Error {
  constructor(readonly path: string) {
    super(path);
    this.name = "FileMissing";
  }
}

const SEGMENT = /^[^/\\\u0000-\u001f]+$/;
const DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)$/iu;

/** True for a Windows device name (CON, NUL, COM1, ...) in any case, with any extension. */
export function isDeviceName(name: string): boolean {
  const stem = (name.split(".", 1)[0] ?? "").replace(/ +$/, "");
  // Python's re.IGNORECASE also lets U+0131 (dotless i) match "i" (CONıN$).
  return DEVICE.test(stem.replace(/\u0131/g, "i"));
}

/** Return `path` if it is a safe relative POSIX sandbox path, else throw `invalid_request`. */
export function checkPath(path: unknown): string {
  if (typeof path !== "string" || path === "" || Array.from(path).length > 4096) {
    throw new CaseError("invalid_request", `sandbox path ${quote(path)} is empty or too long`);
  }
  for (const seg of path.split("/")) {
    if (!SEGMENT.test(seg) || seg === "." || seg === "..") {
      throw new CaseError("invalid_request", `sandbox path ${quote(path)} is not a relative POSIX path inside the sandbox`);
    }
    if (isDeviceName(seg)) throw new CaseError("invalid_request", `sandbox path ${quote(path)} names a device (${seg})`);
  }
  return path;
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}

/** What every sandbox does. `read` and `delete` throw {@link FileMissing} for a missing file. */
export interface SandboxProvider {
  /** True when a case needs no provider to replay (in-memory files). */
  readonly portable: boolean;
  /** True when the sandbox can refuse every network access. */
  readonly blocksEgress: boolean;
  read(path: string): Uint8Array;
  write(path: string, data: Uint8Array): void;
  delete(path: string): void;
  /** Sorted relative POSIX paths starting with `prefix`. */
  list(prefix?: string): string[];
  snapshot(): unknown;
  restore(token: unknown): void;
}

function byCodePoint(a: string, b: string): number {
  // Python sorts str by code point; for the BMP-only common case this equals UTF-16 order.
  const x = Array.from(a, (c) => c.codePointAt(0) ?? 0);
  const y = Array.from(b, (c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return x.length - y.length;
}

/** In-memory files and no network: portable, blocks egress. */
/** A sandbox file known only by its sha256 (its bytes were never recorded). */
export class HashOnly {
  constructor(readonly sha256: string) {}
}

/** A replay read a hash-only file: `sandbox_content_missing`, stop key `sandbox:<path>` (spec/replay.md 2.3). */
export class ContentMissing extends StopError {
  constructor(path: string, sha: string) {
    super(
      "sandbox_content_missing",
      `the replay read ${quote(path)}, which the case knows only by its sha256 ${sha}`,
      `sandbox:${path}`,
      "save the case again with --sandbox DIR holding the file's bytes",
    );
  }
}

export class FakeSandbox implements SandboxProvider {
  readonly portable = true;
  readonly blocksEgress = true;
  private files = new Map<string, Uint8Array | HashOnly>();

  /** Start with `files` (strings are UTF-8 encoded) and the hash-only entries `hashOnly` (path -> sha256). */
  constructor(files: Record<string, Uint8Array | string> | Map<string, Uint8Array> = {}, hashOnly: Map<string, string> = new Map()) {
    for (const [path, sha] of hashOnly) this.files.set(checkPath(path), new HashOnly(sha));
    const entries = files instanceof Map ? [...files] : Object.entries(files);
    for (const [path, data] of entries) this.write(path, typeof data === "string" ? new TextEncoder().encode(data) : data);
  }

  read(path: string): Uint8Array {
    checkPath(path);
    const data = this.files.get(path);
    if (data === undefined) throw new FileMissing(path);
    if (data instanceof HashOnly) throw new ContentMissing(path, data.sha256);
    return data;
  }

  write(path: string, data: Uint8Array): void {
    this.files.set(checkPath(path), Uint8Array.from(data));
  }

  delete(path: string): void {
    checkPath(path);
    if (!this.files.delete(path)) throw new FileMissing(path);
  }

  list(prefix = ""): string[] {
    return [...this.files.keys()].filter((p) => p.startsWith(prefix)).sort(byCodePoint);
  }

  snapshot(): Map<string, Uint8Array | HashOnly> {
    return new Map(this.files);
  }

  restore(token: unknown): void {
    this.files = new Map(token as Map<string, Uint8Array | HashOnly>);
  }

  /** A copy of every file whose bytes are known. */
  get contents(): Map<string, Uint8Array> {
    const out = new Map<string, Uint8Array>();
    for (const [p, d] of this.files) if (d instanceof Uint8Array) out.set(p, d);
    return out;
  }
}

/** A real directory: not portable and cannot block egress, so cases cannot be saved from it. */
export class DirectorySandbox implements SandboxProvider {
  readonly portable = false;
  readonly blocksEgress = false;
  readonly root: string;

  constructor(path: string) {
    mkdirSync(path, { recursive: true });
    this.root = realpathSync(resolve(path));
  }

  /** The path with every symlink of its existing part followed (as Python's `resolve`),
   * refused with `invalid_request` when it leaves the root. */
  private resolvePath(path: string): string {
    let real = resolve(this.root, checkPath(path));
    const rest: string[] = [];
    for (;;) {
      try {
        real = realpathSync(real);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if ((code !== "ENOENT" && code !== "ENOTDIR") || dirname(real) === real) throw err;
        rest.unshift(basename(real));
        real = dirname(real);
      }
    }
    const target = join(real, ...rest);
    const rel = relative(this.root, target);
    if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new CaseError("invalid_request", `sandbox path ${quote(path)} leaves the sandbox`);
    }
    return target;
  }

  /** Opened without following a symlink (one swapped in after resolving fails to open); a
   * file with more than one hard link is refused: it may link a file outside the root. */
  read(path: string): Uint8Array {
    const target = this.resolvePath(path);
    let fd: number;
    try {
      fd = openSync(target, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new FileMissing(path);
      throw err;
    }
    try {
      const st = fstatSync(fd);
      if (st.isDirectory()) throw new FileMissing(path);
      if (st.nlink > 1) {
        throw new CaseError("invalid_request", `sandbox path ${quote(path)} has ${st.nlink} hard links; the sandbox reads only files with one`);
      }
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** A new file renamed over the old one: neither a symlink nor a hard link is written through. */
  write(path: string, data: Uint8Array): void {
    const target = this.resolvePath(path);
    mkdirSync(dirname(target), { recursive: true });
    replaceFile(target, data);
  }

  delete(path: string): void {
    try {
      unlinkSync(this.resolvePath(path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw new FileMissing(path);
      throw err;
    }
  }

  list(prefix = ""): string[] {
    const out: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = join(dir, entry.name);
        if (entry.isDirectory()) walk(full);
        else if (entry.isFile()) {
          const rel = relative(this.root, full).split(sep).join("/");
          if (rel.startsWith(prefix)) out.push(rel);
        }
      }
    };
    walk(this.root);
    return out.sort(byCodePoint);
  }

  snapshot(): Map<string, Uint8Array> {
    return new Map(this.list().map((p) => [p, this.read(p)]));
  }

  restore(token: unknown): void {
    rmSync(this.root, { recursive: true, force: true });
    mkdirSync(this.root, { recursive: true });
    for (const [p, data] of token as Map<string, Uint8Array>) this.write(p, data);
  }
}
