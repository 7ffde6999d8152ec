"""Judging a run (spec/replay.md sections 4-5 and 12, spec/conformance.md): the checks of a
case (:mod:`.checks`), the first divergence (:mod:`.divergence`, :mod:`.agent_diff`),
expected failures (:mod:`.expected`), the conformance suite (:mod:`.conformance`), its
levels (:mod:`.levels`), coverage (:mod:`.coverage`, :mod:`.spec_inventory`) and what the
compliance page shows (:mod:`.compliance`).
"""
