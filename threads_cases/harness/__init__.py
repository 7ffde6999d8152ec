"""The harness, by stage: :mod:`.run` (which implementations and cases, running them, the
pool, settings, accept), :mod:`.check` (checks and verdicts, expected failures, divergence,
the conformance suite, coverage, levels, compliance), :mod:`.report` (JSON Lines, JUnit,
GitHub, the terminal, the compliance page), :mod:`.baseline` (the baseline file and its
edits), :mod:`.pytest` (the pytest plugin) and :mod:`.live` (the live rung).
"""
