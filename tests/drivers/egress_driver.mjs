// The TypeScript driver with a sandbox tool `probe` that tries to leave the process, for the
// egress proof (tests/test_egress_proof.py).
//
//     PROBE_PORT=<port> node egress_driver.mjs
//
// Serves threads-ts as ts/dist/driver.js does, except that every agent rebuilt from a log
// gets this `probe` handler. probe({how}) makes one attempt to send the bytes `how` to
// 127.0.0.1:PROBE_PORT and returns "tried" or what the attempt threw (replays are
// synchronous, so asynchronous attempts are started, not awaited). When an attempt is over
// (it threw; or its connection closed, its request or lookup failed or finished, its child
// exited) the driver appends the line `how<TAB>outcome` to the file $PROBE_SETTLED, so the
// test waits for the attempt itself, never for a time.
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
const settled = (how, outcome) => {
  if (process.env.PROBE_SETTLED) {
    fs.appendFileSync(process.env.PROBE_SETTLED, `${how}\t${String(outcome).split(/\s+/).join(" ")}\n`);
  }
};
// the outcome of a socket: its first error, else "closed"
const track = (how, s) => {
  let error = null;
  s.on("error", (err) => {
    error ??= `error ${err?.code ?? err?.message}`;
  });
  s.on("close", () => settled(how, error ?? "closed"));
};
const failed = (err) => `error ${err?.code ?? err?.message}`;
const send = (host, payload, how = payload) => {
  const s = net.connect(PORT, host);
  track(how, s);
  s.end(payload);
};
const exited = (how, out) => settled(how, `exit ${out.status ?? out.signal ?? out.error?.code}`);
const CHILD = `const s=require('net').connect(${PORT},'127.0.0.1');s.on('error',()=>process.exit(1));s.end(process.argv[1])`;

const ATTEMPTS = {
  net: () => send(HOST, "net"),
  fetch: () => {
    fetch(`http://${HOST}:${PORT}/fetch`).then(
      (res) => settled("fetch", `status ${res.status}`),
      (err) => settled("fetch", failed(err.cause ?? err)),
    );
  },
  dns: () =>
    dns.lookup("localhost", { family: 4 }, (err, address) => {
      if (err) settled("dns", failed(err));
      else send(address, "dns");
    }),
  child: () =>
    exited("child", childProcess.spawnSync(process.execPath, ["-e", CHILD, "child"], { timeout: 5000 })),
  // join the parent's (the host's) network namespace through a child, then connect
  nsenter: () =>
    exited(
      "nsenter",
      childProcess.spawnSync(
        "nsenter",
        ["-t", String(process.ppid), "-n", process.execPath, "-e", CHILD, "nsenter"],
        { timeout: 30000 },
      ),
    ),
  // net.connect with an empty path is a TCP connect to host and port
  empty_path: () => {
    const s = net.connect({ path: "", host: HOST, port: PORT });
    track("empty_path", s);
    s.end("empty_path");
  },
  // a resolver of its own (the module's guarded functions are not its methods), then connect;
  // one try of a second: the listener never answers
  resolver: () => {
    const r = new dns.Resolver({ timeout: 1000, tries: 1 });
    r.setServers([`${HOST}:${PORT}`]);
    r.resolveTxt("resolver.example", (err) => settled("resolver", err ? failed(err) : "answered"));
  },
  resolver_promises: () => {
    const r = new dns.promises.Resolver({ timeout: 1000, tries: 1 });
    r.setServers([`${HOST}:${PORT}`]);
    r.resolveTxt("resolver_promises.example").then(
      () => settled("resolver_promises", "answered"),
      (err) => settled("resolver_promises", failed(err)),
    );
  },
  // a TCP handle of the internal binding, without net.Socket
  binding: () => {
    const { TCP, TCPConnectWrap, constants } = process.binding("tcp_wrap");
    const { WriteWrap } = process.binding("stream_wrap");
    const handle = new TCP(constants.SOCKET);
    const req = new TCPConnectWrap();
    req.oncomplete = (status) => {
      if (status !== 0) {
        settled("binding", `error ${status}`);
        return handle.close();
      }
      const write = new WriteWrap();
      write.handle = handle;
      write.oncomplete = () => handle.close();
      // a write done at once calls no oncomplete: the attempt is over when the call returns
      const err = handle.writeUtf8String(write, "binding");
      settled("binding", err ? `error ${err}` : "written");
    };
    // a connect refused at once (no route in a namespace) calls no oncomplete either
    const err = handle.connect(req, HOST, PORT);
    if (err) {
      settled("binding", `error ${err}`);
      handle.close();
    }
  },
  // the class every child_process function ends in
  child_class: () => {
    const child = new childProcess.ChildProcess();
    child.on("error", (err) => settled("child_class", failed(err)));
    child.on("exit", (code, signal) => settled("child_class", `exit ${code ?? signal}`));
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
  curl: () =>
    exited("curl", childProcess.spawnSync("curl", ["-s", "-m", "3", `http://${HOST}:${PORT}/curl`], { timeout: 5000 })),
};

function probe(_ctx, input) {
  try {
    ATTEMPTS[input.how]();
  } catch (err) {
    const outcome = `raised ${err?.name}: ${err?.message}`;
    settled(input.how, outcome);
    return outcome;
  }
  return "tried";
}

const fromJson = AgentSpec.fromJson.bind(AgentSpec);
AgentSpec.fromJson = (agent, handlers = {}) => fromJson(agent, { ...handlers, probe });
serve();
