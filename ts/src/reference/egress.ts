/**
 * The egress guard of a replay (spec/replay.md 9.1): while a replay runs, network access,
 * name lookups and child processes are refused with `egress_blocked`, the target named as
 * canonical JSON. {@link blockEgress} patches the CommonJS module objects (and syncs the ESM
 * views) so every caller is reached, and returns the attempts and a restore function.
 * Mirrors threads_cases/reference/egress.py.
 */

import { createRequire, syncBuiltinESMExports } from "node:module";

// The CommonJS module objects: patching them (and syncing the ESM views) reaches every caller.
const require = createRequire(import.meta.url);
const http = require("node:http") as typeof import("node:http");
const https = require("node:https") as typeof import("node:https");
const net = require("node:net") as typeof import("node:net");
const dgram = require("node:dgram") as typeof import("node:dgram");
const dns = require("node:dns") as typeof import("node:dns");
const childProcess = require("node:child_process") as typeof import("node:child_process");

import { StopError } from "./model.js";
import { quote } from "../core/texts.js";


/** A network attempt during a replay: `egress_blocked`, stop_key `egress`. */
export function egressBlocked(target: string, what = "network access to"): StopError {
  return new StopError(
    "egress_blocked",
    `${what} ${target} was blocked during a replay`,
    "egress",
    "a replay never reaches the outside world; record the call as a stub instead",
  );
}

/**
 * The neutral text of a network target (spec/replay.md 9.1): the canonical JSON string of
 * `<host>:<port>` (`[<host>]:<port>` when the host holds `:`), or of `<unknown>`.
 */
export function egressTarget(host: unknown, port: unknown): string {
  const p = typeof port === "string" && /^[0-9]+$/.test(port) ? Number(port) : port;
  if (typeof host !== "string" || typeof p !== "number" || !Number.isInteger(p)) return quote("<unknown>");
  return quote(host.includes(":") ? `[${host}]:${p}` : `${host}:${p}`);
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };

/** The target of a URL: its host name and its port, or the scheme's default port. */
function urlTarget(text: string): string {
  try {
    const url = new URL(text);
    const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
    return egressTarget(host, url.port === "" ? DEFAULT_PORTS[url.protocol] : url.port);
  } catch {
    return quote("<unknown>");
  }
}

function describeTarget(args: unknown[]): { target: string; local: boolean } {
  let first = args[0];
  if (Array.isArray(first)) first = first[0]; // net.connect passes normalized [options, cb]
  if (first !== null && typeof first === "object") {
    const o = first as { path?: unknown; host?: unknown; port?: unknown };
    // an empty path is no Unix socket: net connects to host and port then
    if (typeof o.path === "string" && o.path !== "") return { target: quote(o.path), local: true };
    return { target: egressTarget(o.host ?? "localhost", o.port), local: false };
  }
  if (typeof first === "string" && !/^\d+$/.test(first)) return { target: quote(first), local: true };
  return { target: egressTarget(args[1] ?? "localhost", first), local: false };
}

let egressDepth = 0;

/** The internal bindings `process.binding` refuses during a replay, and what each is. */
const BINDINGS: Readonly<Record<string, string>> = {
  tcp_wrap: "network access to",
  udp_wrap: "network access to",
  pipe_wrap: "network access to",
  tls_wrap: "network access to",
  stream_wrap: "network access to",
  cares_wrap: "the name lookup of",
  process_wrap: "the child process",
  spawn_sync: "the child process",
};

/** Every query method of a DNS resolver (node:dns, its Resolver classes, dns.promises). */
const RESOLVER_METHODS = [
  "resolve",
  "resolve4",
  "resolve6",
  "resolveAny",
  "resolveCaa",
  "resolveCname",
  "resolveMx",
  "resolveNaptr",
  "resolveNs",
  "resolvePtr",
  "resolveSoa",
  "resolveSrv",
  "resolveTxt",
  "reverse",
];

/**
 * Block network access until `restore()` is called: `net.Socket.prototype.connect` (what
 * every TCP and TLS client ends in), `http.request`/`get`, `https.request`/`get` and
 * `globalThis.fetch` throw an `egress_blocked` error and record it in `attempts`, so a tool
 * that swallows the error still fails the replay. Unix-socket connects are allowed.
 */
/** A child process as `json(argv)`, or `json(command)` for a shell command string. */
function childTarget(args: unknown[]): string {
  const [file, rest] = args;
  if (typeof file !== "string") return quote("<unknown>");
  if (Array.isArray(rest)) return rest.every((x) => typeof x === "string") ? quote([file, ...rest]) : quote("<unknown>");
  return quote([file]);
}

export function blockEgress(): { attempts: StopError[]; restore: () => void } {
  const attempts: StopError[] = [];
  const refuse = (target: string, what?: string): StopError => {
    const err = egressBlocked(target, what);
    attempts.push(err);
    return err;
  };
  // name lookups and child processes: refused whatever they ask for; a resolver's methods
  // on the module, on its own Resolver class (new dns.Resolver(), after setServers too) and
  // on the promises API's
  const lookedUp = (a: unknown[]): string => (typeof a[0] === "string" ? quote(a[0]) : quote("<unknown>"));
  const refusedModules: [Record<string, unknown>, string[], string, (args: unknown[]) => string][] = [
    [dns as unknown as Record<string, unknown>, ["lookup", "lookupService", ...RESOLVER_METHODS], "the name lookup of", lookedUp],
    [dns.promises as unknown as Record<string, unknown>, ["lookup", "lookupService", ...RESOLVER_METHODS], "the name lookup of", lookedUp],
    [dns.Resolver.prototype as unknown as Record<string, unknown>, RESOLVER_METHODS, "the name lookup of", lookedUp],
    [dns.promises.Resolver.prototype as unknown as Record<string, unknown>, RESOLVER_METHODS, "the name lookup of", lookedUp],
    // the class every child_process function ends in: new ChildProcess().spawn({file, args})
    [
      childProcess.ChildProcess.prototype as unknown as Record<string, unknown>,
      ["spawn"],
      "the child process",
      (a) => {
        const o = a[0] as { args?: unknown } | undefined;
        const argv = o?.args;
        return Array.isArray(argv) && argv.every((x) => typeof x === "string") ? quote(argv) : quote("<unknown>");
      },
    ],
    [
      childProcess as unknown as Record<string, unknown>,
      ["spawn", "spawnSync", "execFile", "execFileSync", "fork"],
      "the child process",
      (a) => childTarget(a),
    ],
    // a shell command string
    [childProcess as unknown as Record<string, unknown>, ["exec", "execSync"], "the child process", (a) => quote(typeof a[0] === "string" ? a[0] : "<unknown>")],
  ];
  const savedModules: [Record<string, unknown>, string, unknown][] = [];
  for (const [mod, names, what, target] of refusedModules) {
    for (const name of names) {
      if (typeof mod[name] !== "function") continue;
      savedModules.push([mod, name, mod[name]]);
      mod[name] = (...args: unknown[]): never => {
        throw refuse(target(args), what);
      };
    }
  }
  const proto = net.Socket.prototype as unknown as { connect: (...args: unknown[]) => unknown };
  const udp = dgram.Socket.prototype as unknown as { send: (...args: unknown[]) => unknown; connect: (...args: unknown[]) => unknown };
  const saved = {
    udpSend: udp.send,
    udpConnect: udp.connect,
    connect: proto.connect,
    httpRequest: http.request,
    httpGet: http.get,
    httpsRequest: https.request,
    httpsGet: https.get,
    fetch: globalThis.fetch,
  };
  proto.connect = function connect(this: unknown, ...args: unknown[]): unknown {
    const { target, local } = describeTarget(args);
    if (local) return saved.connect.apply(this, args);
    throw refuse(target);
  };
  // a datagram needs no connect(): UDP to any address is egress too
  udp.connect = function connect(this: unknown, ...args: unknown[]): unknown {
    throw refuse(egressTarget(typeof args[1] === "string" ? args[1] : "localhost", args[0]));
  };
  udp.send = function send(this: unknown, ...args: unknown[]): unknown {
    // send(msg[, offset, length][, port][, address][, callback]): an address is a port number argument
    const rest = args.slice(1).filter((a) => typeof a !== "function");
    const numbers = rest.filter((a) => typeof a === "number") as number[];
    const port = rest.length === 1 || rest.length === 2 ? numbers[0] : rest.length >= 3 ? numbers[2] : undefined;
    if (port === undefined) return saved.udpSend.apply(this, args); // a connected socket
    const host = rest.find((a) => typeof a === "string") ?? "localhost";
    throw refuse(egressTarget(host, port));
  };
  const refuseRequest = (...args: unknown[]): never => {
    const first = args[0];
    const target =
      typeof first === "string" || first instanceof URL
        ? urlTarget(String(first))
        : describeTarget([{ host: (first as { hostname?: unknown; host?: unknown } | undefined)?.hostname ?? (first as { host?: unknown } | undefined)?.host, port: (first as { port?: unknown } | undefined)?.port }]).target;
    throw refuse(target);
  };
  const mutable = (m: object): Record<string, unknown> => m as Record<string, unknown>;
  mutable(http)["request"] = refuseRequest;
  mutable(http)["get"] = refuseRequest;
  mutable(https)["request"] = refuseRequest;
  mutable(https)["get"] = refuseRequest;
  // the internal bindings everything above is built on, reachable through the deprecated
  // process.binding(): a TCP handle from "tcp_wrap" connects without net.Socket
  const proc = process as unknown as { binding: (name: string) => unknown };
  const savedBinding = proc.binding;
  proc.binding = function binding(name: string): unknown {
    const what = BINDINGS[name];
    if (what !== undefined) throw refuse(quote("<unknown>"), what);
    return savedBinding.call(process, name);
  };
  globalThis.fetch = ((input: unknown): never => {
    const url = typeof input === "string" || input instanceof URL ? String(input) : String((input as { url?: unknown })?.url ?? input);
    throw refuse(urlTarget(url));
  }) as typeof fetch;
  syncBuiltinESMExports();
  egressDepth++;
  let restored = false;
  return {
    attempts,
    restore: () => {
      if (restored) return;
      restored = true;
      egressDepth--;
      proto.connect = saved.connect;
      udp.send = saved.udpSend;
      udp.connect = saved.udpConnect;
      mutable(http)["request"] = saved.httpRequest;
      mutable(http)["get"] = saved.httpGet;
      mutable(https)["request"] = saved.httpsRequest;
      mutable(https)["get"] = saved.httpsGet;
      globalThis.fetch = saved.fetch;
      proc.binding = savedBinding;
      for (const [mod, name, original] of savedModules) mod[name] = original;
      syncBuiltinESMExports();
    },
  };
}

/** Whether a {@link blockEgress} block is active. */
export function egressBlockedNow(): boolean {
  return egressDepth > 0;
}
