"""The pytest plugin (:mod:`.plugin`, the ``pytest11`` entry point) with its options
(:mod:`.options`), live session (:mod:`.live`), refusals (:mod:`.named`) and failure text
(:mod:`.text`). Every module here uses absolute imports of pytest: ``import pytest`` is the
real pytest.
"""
