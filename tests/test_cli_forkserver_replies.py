"""The tests' CLI fork server client (tests/conftest.py ``_ForkServer``) reads both of a
call's reply lines when they arrive in one write: a buffered readline of ``pid`` used to take
the ``status`` line behind it into the reader's buffer, and the select that followed waited
out the whole timeout for a line already read, so a CLI call that ended at once (a refusal)
failed as "hung for 300s"."""

from __future__ import annotations

import subprocess
import sys

from conftest import _ForkServer

# a stand-in server: ready, then both replies of one call in a single write
FAKE = (
    "import sys\n"
    "sys.stdout.buffer.write(b'ready\\n'); sys.stdout.flush()\n"
    "sys.stdin.readline()\n"
    "sys.stdout.buffer.write(b'pid 4242\\nstatus 2\\n'); sys.stdout.flush()\n"
    "sys.stdin.readline()\n"
)


def test_a_status_right_behind_its_pid_is_read_at_once() -> None:
    server = _ForkServer()
    server.proc = subprocess.Popen(
        [sys.executable, "-c", FAKE], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert server._line(None) == b"ready\n"
        assert server.proc.stdin is not None
        server.proc.stdin.write(b"{}\n")
        server.proc.stdin.flush()
        assert server._reply(b"pid ", None) == "4242"
        # with the old reader this select saw nothing on the pipe and raised TimeoutError
        assert server._reply(b"status ", 5.0) == "2"
    finally:
        server.proc.kill()
        server.proc.wait()
