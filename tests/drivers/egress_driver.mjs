// The TypeScript driver with a sandbox tool `probe` that tries to leave the process, for the
// egress proof (tests/test_egress_proof.py).
//
//     PROBE_PORT=<port> node egress_driver.mjs
//
// Serves threads-ts as ts/dist/driver.js does, except that every agent rebuilt from a log
// gets this `probe` handler. probe({how}) makes one attempt to send the bytes `how` to
// 127.0.0.1:PROBE_PORT and returns "tried" or what the attempt threw (replays are
// synchronous, so asynchronous attempts are started and their errors ignored).
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import path from "node:path";

const require = createRequire(import.meta.url);
const net = require("node:net");
const dns = require("node:dns");
const childProcess = require("node:child_process");
const fs = require("node:fs");

const dist = path.resolve(process.env.THREADS_CASES_TS_DIST ?? path.join(import.meta.dirname, "..", "..", "ts", "dist"));
const { AgentSpec } = await import(pathToFileURL(path.join(dist, "src", "reference", "agent.js")).href);
const { serve } = await import(pathToFileURL(path.join(dist, "src", "protocol", "driver.js")).href);

const PORT = Number(process.env.PROBE_PORT);
const HOST = "127.0.0.1";
const send = (host, payload) => {
  const s = net.connect(PORT, host);
  s.on("error", () => {});
  s.end(payload);
};
const CHILD = `const s=require('net').connect(${PORT},'127.0.0.1');s.on('error',()=>process.exit(1));s.end(process.argv[1])`;

const ATTEMPTS = {
  net: () => send(HOST, "net"),
  fetch: () => {
    fetch(`http://${HOST}:${PORT}/fetch`).catch(() => {});
  },
  dns: () =>
    dns.lookup("localhost", { family: 4 }, (err, address) => {
      if (!err) send(address, "dns");
    }),
  child: () => childProcess.spawnSync(process.execPath, ["-e", CHILD, "child"], { timeout: 5000 }),
  // join the parent's (the host's) network namespace through a child, then connect
  nsenter: () =>
    childProcess.spawnSync(
      "nsenter",
      ["-t", String(process.ppid), "-n", process.execPath, "-e", CHILD, "nsenter"],
      { timeout: 30000 },
    ),
  // net.connect with an empty path is a TCP connect to host and port
  empty_path: () => {
    const s = net.connect({ path: "", host: HOST, port: PORT });
    s.on("error", () => {});
    s.end("empty_path");
  },
  // a resolver of its own (the module's guarded functions are not its methods), then connect
  resolver: () => {
    const r = new dns.Resolver();
    r.setServers([`${HOST}:${PORT}`]);
    r.resolveTxt("resolver.example", () => {});
  },
  resolver_promises: () => {
    const r = new dns.promises.Resolver();
    r.setServers([`${HOST}:${PORT}`]);
    r.resolveTxt("resolver_promises.example").catch(() => {});
  },
  // a TCP handle of the internal binding, without net.Socket
  binding: () => {
    const { TCP, TCPConnectWrap, constants } = process.binding("tcp_wrap");
    const { WriteWrap } = process.binding("stream_wrap");
    const handle = new TCP(constants.SOCKET);
    const req = new TCPConnectWrap();
    req.oncomplete = (status) => {
      if (status !== 0) return handle.close();
      const write = new WriteWrap();
      write.handle = handle;
      write.oncomplete = () => handle.close();
      handle.writeUtf8String(write, "binding");
    };
    handle.connect(req, HOST, PORT);
  },
  // the class every child_process function ends in
  child_class: () => {
    const child = new childProcess.ChildProcess();
    child.on("error", () => {});
    child.spawn({ file: process.execPath, args: [process.execPath, "-e", CHILD, "child_class"], stdio: "ignore" });
  },
  // the names of the driver's variables, one a line, to $PROBE_ENV_OUT (passed by pass_env)
  env: () =>
    fs.writeFileSync(
      process.env.PROBE_ENV_OUT,
      Object.keys(process.env)
        .sort()
        .map((k) => `${k}\n`)
        .join(""),
    ),
  curl: () => childProcess.spawnSync("curl", ["-s", "-m", "3", `http://${HOST}:${PORT}/curl`], { timeout: 5000 }),
};

function probe(_ctx, input) {
  try {
    ATTEMPTS[input.how]();
  } catch (err) {
    return `raised ${err?.name}: ${err?.message}`;
  }
  return "tried";
}

const fromJson = AgentSpec.fromJson.bind(AgentSpec);
AgentSpec.fromJson = (agent, handlers = {}) => fromJson(agent, { ...handlers, probe });
serve();
