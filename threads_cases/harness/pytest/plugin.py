"""The pytest plugin (registered as ``threads_cases`` through the ``pytest11`` entry point).

Running saved cases as tests::

    pytest --threads-cases cases                    # or, in the ini file:
                                                    #   threads_cases_paths = cases
    pytest --threads-cases cases --threads-cases-impl threads-py --threads-cases-impl threads-ts
    pytest --threads-cases cases --threads-cases-strict     # drifted fails too
    pytest --threads-cases cases -n 4                       # pytest-xdist
    pytest --threads-cases cases --threads-cases-isolated   # drivers in a network namespace
    pytest --threads-cases cases --threads-cases-live --threads-cases-model claude-sonnet-4-5

By default ``threads-py`` runs in process under its egress guard (best effort, spec/replay.md
9.1); ``--threads-cases-isolated`` runs every implementation as a driver process inside an
empty network namespace where one can be made (else under the guard).

Every case directory under the given folders becomes one item per implementation (each
``--threads-cases-impl``; by default ``threads-py`` and every implementation configured
under ``[tool.threads-cases]``, which counts as named, as for ``run``: one that cannot start
fails its items, and one named whose selected cases all leave its dialect out of case.json
``dialects`` is refused as a usage error before any runs, with ``run``'s message), named
``<case name>[<impl>]`` (node id ``<case dir>/case.json::<case name>[<impl>]``; the folder's
name when case.json gives no valid name). Collection reads only each case.json's name; the
case is loaded and checked when its item runs. Verdicts:
``pass`` passes; ``skip`` skips; ``drifted`` passes (with a ``threads-cases`` report
section) unless ``--threads-cases-strict``; a failure the baseline lists
(``--threads-cases-baseline FILE``, default as for ``threads-cases run``) is ``xfailed``
with the entry's reason, and a listed case that passes fails as ``[XPASS(strict)]`` naming
the stale entry; ``fail`` and ``error`` fail, and the failure
report is the CLI's failure panel as text: the reason codes, each failing check, the matcher
beside the nearest replayed event, state differences by JSON pointer.

Writing your own test bodies: the ``threads_case`` fixture gives a loaded
:class:`threads_cases.case.directory.Case` for each parameter of
:func:`threads_cases.pytest.cases`::

    from threads_cases.pytest import assert_passes, cases

    @pytest.mark.parametrize("threads_case", cases("cases"), indirect=True)
    def test_my_agent(threads_case):
        assert_passes(threads_case, agent="my_agent:agent")   # fails with str(result)

``--threads-cases-agent REF`` (``IMPL=REF``, repeatable; ``--threads-cases-app-dir DIR``)
replays your own agent in every item instead of the recorded one, as ``run --agent`` does;
without it, ``agent`` under ``[tool.threads-cases]`` is used (spec/replay.md 8.2).

``--threads-cases-live`` runs each turn live (spec/replay.md section 11) with
``--threads-cases-model``, ``--threads-cases-provider``, ``--threads-cases-base-url`` and
``--threads-cases-live-budget`` (live model calls per pytest process: each pytest-xdist
worker has its own budget). The API key comes from the provider's environment variable.
``--threads-cases-repeat N`` runs each live item N times as one combined result (its pass
rate with a Wilson 95% interval, pass^k and flips in a report section and as properties in
pytest's JUnit XML), and ``--threads-cases-fail-under-rate P`` fails an item whose interval's
lower bound is below P (spec/replay.md 11.9).

The plugin does nothing unless ``--threads-cases`` or ``threads_cases_paths`` is given
(apart from offering the fixture). Collection is deterministic, so pytest-xdist workers
re-collect the same items by node id.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from threads_cases.case.loader import Case
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.run.runner import CaseResult
    from threads_cases.protocol.client import Implementation

_DIRS = pytest.StashKey[list[Path]]()
_IMPLS = pytest.StashKey[dict[str, Any]]()
_LIVE = pytest.StashKey[Any]()
_REPEAT = pytest.StashKey[Any]()
_BASELINE = pytest.StashKey[Any]()
_NAMES = pytest.StashKey[list[str]]()
_SHARED = pytest.StashKey[dict[str, list[str]]]()
#: The implementations named (``--threads-cases-impl``, else those configured under
#: ``[tool.threads-cases]``), each with its dialect.
_NAMED = pytest.StashKey[dict[str, str]]()
#: The user's own agent of each implementation that has one (spec/replay.md 8.2).
_AGENTS = pytest.StashKey[dict[str, Any]]()
#: ``strict = true`` in the settings (read once, when the session starts)
_STRICT = pytest.StashKey[bool]()
#: the session's reads remembered (case/once.py), closed when it ends
_SESSION = pytest.StashKey[contextlib.ExitStack]()
#: folder -> its resolved path, for the case folders collection looks at (:func:`_resolved`)
_RESOLVED = pytest.StashKey[dict[Path, Path]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from threads_cases.harness.pytest.options import OPTIONS

    group = parser.getgroup("threads-cases", "threads-cases: replay saved agent cases")
    for flag, options in OPTIONS:
        group.addoption(flag, **options)
    parser.addini(
        "threads_cases_paths",
        type="linelist",
        default=[],
        help="folders whose case directories are collected as tests (relative to the ini file)",
    )


def _configured_dirs(config: pytest.Config) -> list[Path]:
    from threads_cases.harness.pytest.named import case_dir  # a case.json: its case

    here = config.invocation_params.dir
    dirs = [(here / d).resolve() for d in config.getoption("threads_cases_paths") or []]
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    dirs += [(base / d).resolve() for d in config.getini("threads_cases_paths")]
    return list(dict.fromkeys(map(case_dir, dirs)))


def _agents(config: pytest.Config, known: Any) -> dict[str, Any]:
    """``--threads-cases-agent`` / ``--threads-cases-app-dir`` (folders taken from the
    invocation folder), else ``agent`` / ``app-dir`` under ``[tool.threads-cases]``."""
    from threads_cases.harness.run.agent_setup import agent_refs

    here = config.invocation_params.dir
    dirs = [str(here / d) for d in config.getoption("threads_cases_app_dir") or []]
    return agent_refs(config.getoption("threads_cases_agent"), dirs, known=known, start=here)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def pytest_configure(config: pytest.Config) -> None:
    dirs = _configured_dirs(config)
    config.stash[_DIRS] = dirs
    config.stash[_IMPLS] = {}
    config.stash[_LIVE] = None
    if not dirs:
        return
    from threads_cases.harness.pytest.live import live_run, repeat_of

    if config.getoption("threads_cases_live"):
        config.stash[_LIVE] = live_run(config)
    config.stash[_REPEAT] = repeat_of(config, config.stash[_LIVE])
    from threads_cases.core.errors import CaseError
    from threads_cases.harness.pytest.named import check_case_dirs, usage_error

    check_case_dirs(dirs)  # missing, a file, or no case: refused with the CLI's words
    _remember_reads(config)
    from threads_cases.harness.baseline.file import load_baseline
    from threads_cases.harness.run.registry import (
        available_implementations,
        configured,
        impl_setting,
        implementation_dialect,
        strict_setting,
    )

    explicit = config.getoption("threads_cases_baseline")
    try:
        config.stash[_BASELINE] = load_baseline(
            None if explicit is None else config.invocation_params.dir / explicit,
            config.invocation_params.dir,
        )
        known = available_implementations()  # checks [tool.threads-cases] too
        # a configured implementation is named (spec/driver-protocol.md 5.4), as for `run`;
        # so is each one of the impl setting, which replaces the default
        given = config.getoption("threads_cases_impl") or impl_setting()
        named = given or list(configured())
        names = given or ["threads-py", *named]
        config.stash[_AGENTS] = _agents(config, configured())
        config.stash[_STRICT] = strict_setting()  # the settings read once per session
    except CaseError as err:
        raise usage_error(err) from None
    config.stash[_NAMES] = names
    unknown = [n for n in names if n not in known]
    if unknown:
        raise pytest.UsageError(
            f"threads-cases: unknown implementation {unknown[0]!r}; known: {', '.join(known)}"
        )
    try:
        config.stash[_NAMED] = {n: implementation_dialect(n) for n in named}
    except CaseError as err:
        raise usage_error(err) from None
    # Make sure pytest visits the case folders: add each one that no argument reaches
    # (neither an ancestor of it nor a path inside it). Workers of pytest-xdist compute the
    # same arguments from the same invocation, so they collect the same items.
    args = [str(a) for a in config.args]
    arg_paths = [(config.invocation_params.dir / a.split("::")[0]).resolve() for a in args]
    for d in dirs:
        if not any(_inside(d, a) or _inside(a, d) for a in arg_paths):
            config.args.append(str(d))
            arg_paths.append(d)


def _remember_reads(config: pytest.Config) -> None:
    """Each case.json read once in the session: collection's peek, then the item's load
    (case/once.py); :func:`pytest_unconfigure` ends it."""
    from threads_cases.case.once import one_run

    config.stash[_SESSION] = contextlib.ExitStack()
    config.stash[_SESSION].enter_context(one_run())


@pytest.hookimpl(trylast=True)  # after -k and -m deselected theirs: the items that will run
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Refuse the session, as ``threads-cases run`` refuses the run (exit 2), when a named
    implementation has items but none of their cases lists its dialect in case.json
    ``dialects``: every item would skip (``not_listed``), a green session that ran nothing
    on it (spec/reports.md 3.2)."""
    named = config.stash.get(_NAMED, {})
    if not named or hasattr(config, "workerinput"):
        return  # under pytest-xdist the controller checks what the workers collected
    from threads_cases.harness.pytest.named import check_named

    check_named(
        [
            (item.case_path, item.impl, named[item.impl])
            for item in items
            if isinstance(item, CaseItem) and item.impl in named
        ]
    )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """The check of :func:`pytest_collection_modifyitems` on the pytest-xdist controller,
    from the node ids a worker collected (``<case dir>/case.json::<name>[<impl>]``)."""
    config: pytest.Config = node.config
    named = config.stash.get(_NAMED, {})
    if named:
        from threads_cases.harness.pytest.named import check_named, runs_of_node_ids

        check_named(runs_of_node_ids(ids, config.rootpath, named))


def pytest_unconfigure(config: pytest.Config) -> None:
    for impl in config.stash.get(_IMPLS, {}).values():
        with contextlib.suppress(Exception):  # a driver that is already gone
            impl.close()
    session = config.stash.get(_SESSION, None)
    if session is not None:
        session.close()


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A case directory under the configured folders is collected through its case.json
    alone: pytest never walks the case's logs, recordings and artifacts, one walk of the
    folders for the whole session. The case.json's :class:`CaseFile` is the folder's node
    itself (one node a case, not a folder node above it: collection's cost is per node),
    unless a command-line argument names the folder or a path inside it, where pytest
    matches each level of the path: then a :class:`CaseFolder` holds the :class:`CaseFile`.
    The node ids are the same either way (``<case dir>/case.json::<name>[<impl>]``). A case
    folder is data, not a test package: a ``conftest.py`` inside one is not loaded (unless
    the folder is named on the command line, as pytest loads those of its arguments). A
    ``case.json`` that is a folder: the case is still collected (as ``run`` and ``list``
    find it), so that its item fails with the CLI's error instead of the case being skipped
    without a word."""
    if path.name == "case.json":
        return pytest_collect_file(path, parent)
    if not os.path.lexists(path / "case.json"):
        return None
    dirs = parent.config.stash.get(_DIRS, [])
    if not any(_inside(_resolved(path, parent.config), d) for d in dirs):
        return None
    if parent.session.isinitpath(path, with_parents=True):
        return CaseFolder.from_parent(parent, path=path)
    return CaseFile.from_parent(parent, path=path / "case.json")


def _resolved(path: Path, config: pytest.Config) -> Path:
    """``path.resolve()``: from its folder's, resolved once a session, when ``path`` is not
    a symlink (the same path; ``resolve`` reads every component's link, for each case)."""
    if path.is_symlink():
        return path.resolve()
    folders = config.stash.setdefault(_RESOLVED, {})
    folder = folders.get(path.parent)
    if folder is None:
        folder = folders[path.parent] = path.parent.resolve()
    return folder / path.name


class CaseFolder(pytest.Directory):
    """A case directory that a command-line argument names (or a path inside it): its
    case.json alone is collected (the case loads when it runs)."""

    def collect(self) -> Any:
        found = pytest_collect_file(self.path / "case.json", self)
        return [found] if found is not None else []


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.name != "case.json":
        return None
    dirs = parent.config.stash.get(_DIRS, [])
    if not dirs:
        return None
    case_dir = file_path.parent.resolve()
    if not any(_inside(case_dir, d) for d in dirs):
        return None
    return CaseFile.from_parent(parent, path=file_path)


class CaseFile(pytest.File):
    """A case directory (collected through its case.json): one item per implementation."""

    def collect(self) -> Any:
        from threads_cases.case.directory import peek_case_name

        # Only case.json's name is read here; the item loads and checks the whole case when
        # it runs, so a broken case is that item's failure, never a collection error.
        name = peek_case_name(self.path.parent) or self.path.parent.name
        for impl in self.config.stash.get(_NAMES, ["threads-py"]):
            yield CaseItem.from_parent(self, name=f"{name}[{impl}]", impl=impl)


class CaseFailure(Exception):
    """A case that failed or errored (or drifted under strict)."""

    def __init__(self, result: CaseResult) -> None:
        super().__init__(f"{result.case} [{result.implementation}]: {result.verdict}")
        self.result = result


class CaseItem(pytest.Item):
    """One case on one implementation."""

    def __init__(self, *, impl: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.impl = impl
        self.result: CaseResult | None = None

    @property
    def case_path(self) -> Path:
        return self.path.parent

    def _shared_listed(self, baseline: Any) -> dict[str, list[str]]:
        """Names two session cases share that the baseline lists (spec/replay.md 12.3)."""
        if _SHARED not in self.config.stash:  # once per session
            from threads_cases.harness.check.expected import shared_listed

            mine = {i.case_path for i in self.session.items if isinstance(i, CaseItem)}
            cases = sorted(Path(os.path.relpath(c, self.config.rootpath)) for c in mine)
            self.config.stash[_SHARED] = shared_listed(cases, baseline)
        return self.config.stash[_SHARED]

    def _implementation(self) -> Implementation:
        isolated = bool(self.config.getoption("threads_cases_isolated"))
        cache = self.config.stash[_IMPLS]
        if self.impl == "threads-py" and not isolated:
            if self.impl not in cache:  # in process, under the egress guard: one a session,
                from threads_cases.protocol.server import PythonImplementation

                cache[self.impl] = PythonImplementation()  # as `run` has one for its cases
            in_process: Implementation = cache[self.impl]
            return in_process
        if self.impl not in cache:
            from threads_cases.harness.run.isolation import default_isolation
            from threads_cases.harness.run.registry import open_implementation

            mode = default_isolation() if isolated else "guard"
            # named in the plugin's options: one that cannot start errors, never skips
            cache[self.impl] = open_implementation(
                self.impl, isolated=isolated, isolation=mode, required=True
            )
        impl: Implementation = cache[self.impl]
        return impl

    def runtest(self) -> None:
        from threads_cases.harness.report.result_text import describe
        from threads_cases.harness.run.runner import run_case

        strict = bool(self.config.getoption("threads_cases_strict")) or self.config.stash[_STRICT]
        from threads_cases.harness.check.expected import apply_shared
        from threads_cases.harness.report.result_text import baseline_text, stale_text
        from threads_cases.harness.run.repeat import repeat_runs

        live = self.config.stash.get(_LIVE, None)
        impl = self._implementation()
        agent = self.config.stash[_AGENTS].get(self.impl)
        run = lambda: run_case(self.case_path, impl, agent, live=live)  # noqa: E731
        result = repeat_runs(run, self.config.stash.get(_REPEAT, None), strict)
        baseline = self.config.stash[_BASELINE]
        apply_shared(result, baseline, self._shared_listed(baseline), strict)
        self.result = result
        self.user_properties.append(("threads_cases_verdict", result.verdict))
        if result.repeat is not None:  # in pytest's JUnit XML too (record_property)
            from threads_cases.harness.report.repeat_view import junit_properties, rate_text

            self.user_properties.extend(junit_properties(result))
            self.add_report_section("call", "threads-cases", f"repeat: {rate_text(result.repeat)}")
        if result.verdict == "xfail":
            pytest.xfail(baseline_text(result).removeprefix("xfail").lstrip(" :"))
        if result.verdict == "xpass":
            pytest.fail(f"[XPASS(strict)] {stale_text(result)}", pytrace=False)
        if result.verdict == "skip":
            pytest.skip(f"{', '.join(result.reasons)}: {result.message}".strip(": "))
        if not result.passed(strict):
            raise CaseFailure(result)
        if result.verdict == "drifted":
            self.add_report_section(
                "call", "threads-cases", f"drifted: {', '.join(result.reasons)}\n{describe(result)}"
            )

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailure):
            from threads_cases.harness.pytest.text import failure_text

            return failure_text(excinfo.value.result)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"threads-case {self.name}"


@pytest.fixture
def threads_case(request: pytest.FixtureRequest) -> Case:
    """A loaded :class:`threads_cases.case.directory.Case`, by indirect parametrization with a case
    path: ``@pytest.mark.parametrize("threads_case", cases("DIR"), indirect=True)``.

    A case that cannot be loaded (``case_invalid``, ``log_invalid``, ...) errors its own test
    with the CLI's ``error[code]: file:line: message`` and hint, without a traceback through
    threads-cases; the other cases still run (as the ``--threads-cases`` items do)."""
    from threads_cases.case.loader import open_case
    from threads_cases.core.errors import CaseError

    param = getattr(request, "param", None)
    if param is None:
        pytest.fail(
            "the threads_case fixture needs a case path: "
            '@pytest.mark.parametrize("threads_case", cases("DIR"), indirect=True) '
            "with cases from threads_cases.pytest",
            pytrace=False,
        )
    try:
        return open_case(Path(param))
    except CaseError as err:
        failure = case_error_text(err, Path(param))
    pytest.fail(failure, pytrace=False)  # outside the except: no chained traceback


def case_error_text(err: CaseError, case: Path) -> str:
    """A case that cannot be used, as the CLI prints it: the ``error[code]`` line, the hint,
    and the case."""
    from threads_cases.harness.pytest.text import pytest_wording

    hint = f"\n  hint: {pytest_wording(err.hint)}" if err.hint else ""
    return f"threads-cases: {case} cannot be loaded\n{err.render()}{hint}\ncase: {case}"
