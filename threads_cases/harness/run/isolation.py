"""Which isolation an implementation runs under (spec/replay.md 9.1).

Three modes, chosen with ``run --isolation``:

``netns``
    Every implementation runs as a driver process inside a new user namespace and a new,
    empty network namespace, with every capability dropped and no further user namespace
    allowed (Linux; util-linux's ``unshare --user --map-root-user --net`` then ``setpriv``,
    or bubblewrap): no socket, name lookup or child process of a replay can reach anything,
    whatever a tool does, and even a driver running as root cannot leave (``setns`` into the
    host's namespace, ``nsenter``, ``unshare`` all fail). Each launcher is tried once with a
    probe that checks the seal (:data:`SEAL_PROBE`); one that cannot seal is never used.
    ``threads-py`` runs as a driver process in this mode: a fork of the harness that seals
    itself the same way (:mod:`threads_cases.protocol.forked_driver`: no second interpreter
    start-up) where such a fork can be sealed here, else under the launcher. The runtimes'
    in-process guards stay on inside, so an attempt they see still gives ``egress_blocked``.
``guard``
    No namespace. ``threads-py`` and ``threads-ts`` rely on their runtimes' in-process guards
    (best effort: :mod:`threads_cases.reference.egress`); a user's driver, which has no guard
    this tool knows of, runs under ``none``.
``none``
    No namespace and no guard (``THREADS_CASES_ISOLATION=none`` for drivers): a replay's
    tools can reach the network. ``run`` warns on every run.

:func:`default_isolation` is ``netns`` where :func:`netns_command` finds a tool that works
here, else ``guard``.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence

from ...core.errors import CaseError

MODES = ("netns", "guard", "none")
#: environment variable a driver reads: ``none`` turns its in-process guard off
ENV = "THREADS_CASES_ISOLATION"
INSTALL_HINT = (
    "install util-linux (Debian/Ubuntu: apt-get install util-linux; it provides unshare) or "
    "bubblewrap (apt-get install bubblewrap); unprivileged users also need user namespaces "
    "(sysctl kernel.unprivileged_userns_clone=1), or pass --isolation guard"
)


#: what ``netns`` applies, as ``run`` prints it and spec/replay.md 9.1 says it
APPLIED = "user and network namespaces, no capabilities, no new user namespace"
#: run inside the new user namespace, still privileged there: forbid any further user
#: namespace (a limit a child namespace inherits and, without capabilities, cannot raise),
#: then drop every capability for good before the driver starts ($0 is setpriv)
_SEAL = (
    'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" --bounding-set=-all '
    '--inh-caps=-all --ambient-caps=-all --no-new-privs -- "$@"'
)
#: true only inside a sealed launch: no effective or bounding capability, no user namespace
SEAL_PROBE = (
    'grep -q "^CapEff:[[:space:]]*0*$" /proc/self/status && '
    'grep -q "^CapBnd:[[:space:]]*0*$" /proc/self/status && '
    'test "$(cat /proc/sys/user/max_user_namespaces)" = 0'
)


def _candidates() -> list[list[str]]:
    out: list[list[str]] = []
    unshare, setpriv = shutil.which("unshare"), shutil.which("setpriv")
    if unshare is not None and setpriv is not None:
        # the same as root: a plain `unshare --net` keeps CAP_SYS_ADMIN over the host's
        # namespaces, so a root driver could setns back; a new user namespace owns none
        out.append(
            [unshare, "--user", "--map-root-user", "--net", "--", "/bin/sh", "-c", _SEAL, setpriv]
        )
    bwrap = shutil.which("bwrap")
    if bwrap is not None:
        seal = ["--unshare-user", "--unshare-net", "--disable-userns", "--cap-drop", "ALL"]
        out.append([bwrap, "--dev-bind", "/", "/", *seal, "--die-with-parent", "--"])
    return out


@functools.cache
def netns_command() -> tuple[str, ...] | None:
    """The argv prefix that runs a command sealed as :data:`APPLIED` says (a new user and
    network namespace, no capabilities), or None when no tool can do that here (each
    candidate is tried once, with :data:`SEAL_PROBE`; the answer is cached)."""
    for prefix in _candidates():
        try:
            done = subprocess.run(
                [*prefix, "/bin/sh", "-c", SEAL_PROBE],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return tuple(prefix)
    return None


def default_isolation() -> str:
    """``netns`` when :func:`netns_command` works here, else ``guard``."""
    return "netns" if netns_command() is not None else "guard"


def check_mode(mode: str) -> str:
    """``mode`` itself when it is one of :data:`MODES` and possible here.

    Raises ``CaseError("invalid_request")`` for an unknown mode, and for ``netns`` where no
    tool can make a namespace (with how to install one)."""
    if mode not in MODES:
        raise CaseError("invalid_request", f"--isolation must be one of {', '.join(MODES)}")
    if mode == "netns" and netns_command() is None:
        raise CaseError(
            "invalid_request",
            "--isolation netns: no tool can create a network namespace here",
            hint=INSTALL_HINT,
        )
    return mode


def launcher(mode: str) -> tuple[str, ...]:
    """The argv prefix a driver command is started with under ``mode``: the namespace tool
    for ``netns``, else nothing."""
    if mode != "netns":
        return ()
    prefix = netns_command()
    if prefix is None:
        raise CaseError("invalid_request", "no tool can create a network namespace here")
    return prefix


def wrap_command(command: Sequence[str], mode: str) -> list[str]:
    """``command`` as it is started under ``mode`` (prefixed with the namespace tool for
    ``netns``)."""
    return [*launcher(mode), *command]


def has_guard(name: str) -> bool:
    """Whether implementation ``name``'s runtime has an in-process egress guard."""
    return name in ("threads-py", "threads-ts")


def label(name: str, mode: str) -> str:
    """What implementation ``name`` actually runs under when ``mode`` is asked for."""
    if mode == "guard" and not has_guard(name):
        return "none"
    return mode
