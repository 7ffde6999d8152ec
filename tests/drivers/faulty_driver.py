"""A driver that misbehaves on purpose, for the runner's fault tests.

    python faulty_driver.py MODE

Serves the real Python implementation (threads_cases.protocol.server.serve semantics), except
(replay requests are counted across restarts in ./.faulty-replays, so a restarted driver behaves):
  crash-start   exits with status 3 before reading anything
  crash-mid     exits with status 1 on the 2nd replay request
  hang          never answers the 1st replay request
  garbage       answers the 1st replay request with a line that is not JSON
  wrong-id      answers every replay request with another id
  huge-line     answers the 1st replay request with a 100 MB line
  exit0         exits with status 0 on the 1st replay request, answering nothing
  missing-field answers the 1st replay request ok, without "events"
  wrong-type    answers the 1st replay request ok, with "events": "none" and a stop of 3
  bad-hash      answers the 1st replay request ok, every field typed right but a request hash
                that breaks replay.answer.schema.json
  close-stdout  closes its stdout on the 1st replay request and keeps running
  stderr-flood  writes 64 MiB to stderr without a newline on the 1st replay, then answers
  orphan        starts `sh -c "sleep 1000; true"` (its pid in ./.faulty-orphans) and hangs
                on the 1st replay request
  unknown-code  answers the 1st replay request with the error code "kaboom"
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import orjson

from threads_cases.core.errors import CaseError
from threads_cases.protocol.server import handle_request

MODE = sys.argv[1]
ODD_ANSWERS = {
    "missing-field": {"ok": True, "stop": None, "requests": []},
    "wrong-type": {"ok": True, "events": "none", "stop": 3},
    "bad-hash": {
        "ok": True,
        "events": [],
        "stop": None,
        "requests": ["not-a-sha256"],
        "consumed": {"replies": 0, "stubs": []},
    },
    "unknown-code": {"ok": False, "error": {"code": "kaboom", "message": "the driver's own words"}},
}


def main() -> None:
    out = sys.stdout.buffer
    if MODE == "crash-start":
        # colour codes and a NUL, as real drivers' stderr holds: reports must stay readable
        print("\x1b[31mfaulty driver: crashing on start\x00\x1b[0m", file=sys.stderr, flush=True)
        sys.exit(3)
    counter = Path(".faulty-replays")
    for raw in iter(sys.stdin.buffer.readline, b""):
        msg = orjson.loads(raw)
        if msg.get("cmd") == "shutdown":
            return
        if msg.get("cmd") == "replay":
            replays = int(counter.read_text()) + 1 if counter.exists() else 1
            counter.write_text(str(replays))
            if MODE == "crash-mid" and replays == 2:
                print("faulty driver: boom in the middle", file=sys.stderr, flush=True)
                os._exit(1)
            if MODE == "hang" and replays == 1:
                print("faulty driver: hanging", file=sys.stderr, flush=True)
                time.sleep(3600)
            if MODE == "garbage" and replays == 1:
                out.write(b"Traceback? no: just garbage on stdout\n")
                out.flush()
                continue
            if MODE == "huge-line" and replays == 1:
                chunk = b"x" * (1024 * 1024)
                for _ in range(100):
                    out.write(chunk)
                out.write(b"\n")
                out.flush()
                continue
            if MODE == "exit0" and replays == 1:
                os._exit(0)
            if replays == 1 and MODE in ODD_ANSWERS:
                out.write(orjson.dumps({"id": msg.get("id"), **ODD_ANSWERS[MODE]}) + b"\n")
                out.flush()
                continue
            if MODE == "close-stdout" and replays == 1:
                sys.stdout.flush()
                os.close(1)
                time.sleep(3600)
            if MODE == "stderr-flood" and replays == 1:
                chunk = b"e" * (1024 * 1024)
                for _ in range(64):
                    sys.stderr.buffer.write(chunk)
                sys.stderr.buffer.write(b"END-OF-FLOOD")
                sys.stderr.flush()
            if MODE == "orphan" and replays == 1:
                child = subprocess.Popen(["sh", "-c", "sleep 1000; true"])
                with open(".faulty-orphans", "a") as fh:
                    fh.write(f"{child.pid}\n")
                time.sleep(3600)
        rid = msg.get("id")
        if MODE == "wrong-id" and msg.get("cmd") == "replay":
            rid = (rid or 0) + 100
        try:
            body = handle_request(msg)
            answer = {"id": rid, "ok": True, **body}
        except CaseError as err:
            answer = {"id": rid, "ok": False, "error": {"code": err.code, "message": err.message}}
        out.write(orjson.dumps(answer) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
