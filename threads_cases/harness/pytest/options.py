"""The pytest plugin's command-line options (:mod:`.plugin`), in the order
``pytest --help`` lists them: ``(flag, keyword arguments of addoption)``."""

from __future__ import annotations

from typing import Any

#: The plugin's command-line options, in the order ``pytest --help`` lists them: (flag,
#: keyword arguments of ``addoption``).
OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--threads-cases",
        {
            "action": "append",
            "dest": "threads_cases_paths",
            "metavar": "DIR",
            "default": None,
            "help": "collect every case directory under DIR as a test (repeatable)",
        },
    ),
    (
        "--threads-cases-impl",
        {
            "action": "append",
            "dest": "threads_cases_impl",
            "metavar": "NAME",
            "default": None,
            "help": "implementation to run each case on (repeatable; default the impl "
            "setting, else threads-py and the implementations configured under "
            "[tool.threads-cases])",
        },
    ),
    (
        "--threads-cases-agent",
        {
            "action": "append",
            "dest": "threads_cases_agent",
            "metavar": "REF",
            "default": None,
            "help": "replay your own agent instead of the recorded one: module:attribute for "
            "threads-py, ./file.mjs#export for threads-ts, or IMPL=REF (repeatable; default: "
            "agent in threads-cases.toml or [tool.threads-cases])",
        },
    ),
    (
        "--threads-cases-app-dir",
        {
            "action": "append",
            "dest": "threads_cases_app_dir",
            "metavar": "DIR",
            "default": None,
            "help": "a folder the agent's module is imported from (repeatable; default: the "
            "invocation folder, or app-dir under [tool.threads-cases])",
        },
    ),
    (
        "--threads-cases-isolated",
        {
            "action": "store_true",
            "dest": "threads_cases_isolated",
            "default": False,
            "help": "run every implementation as a driver process, in an empty network "
            "namespace where available (default: threads-py in process, under its egress "
            "guard)",
        },
    ),
    (
        "--threads-cases-strict",
        {
            "action": "store_true",
            "dest": "threads_cases_strict",
            "default": False,
            "help": "count drifted cases as failures",
        },
    ),
    (
        "--threads-cases-live",
        {
            "action": "store_true",
            "dest": "threads_cases_live",
            "default": False,
            "help": "answer each turn's model calls live: recorded when unchanged, else the "
            "provider",
        },
    ),
    ("--threads-cases-model", {"dest": "threads_cases_model", "default": None}),
    (
        "--threads-cases-provider",
        {
            "dest": "threads_cases_provider",
            "default": "anthropic",
            "choices": ("anthropic", "openai"),
        },
    ),
    ("--threads-cases-base-url", {"dest": "threads_cases_base_url", "default": None}),
    (
        "--threads-cases-live-budget",
        {"dest": "threads_cases_live_budget", "type": int, "default": 20},
    ),
    (
        "--threads-cases-repeat",
        {
            "dest": "threads_cases_repeat",
            "type": int,
            "default": 1,
            "help": "with --threads-cases-live: run each case N times, its item reporting the "
            "pass rate (Wilson 95%%), pass^k and flips (spec/replay.md 11.9)",
        },
    ),
    (
        "--threads-cases-fail-under-rate",
        {
            "dest": "threads_cases_fail_under_rate",
            "type": float,
            "default": None,
            "help": "with --threads-cases-repeat: fail an item whose Wilson 95%% lower bound "
            "is below P",
        },
    ),
    (
        "--threads-cases-baseline",
        {
            "dest": "threads_cases_baseline",
            "metavar": "FILE",
            "default": None,
            "help": "expected failures (default: baseline under [tool.threads-cases], else "
            ".threads-cases/baseline.json when it exists): a listed failure is xfailed, a "
            "listed case that passes fails as a strict xpass",
        },
    ),
)
