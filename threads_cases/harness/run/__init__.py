"""Running a suite (spec/replay.md sections 6 and 9-11): which implementations exist
(:mod:`.registry`) and how they are isolated (:mod:`.isolation`), the run's set-up
(:mod:`.setup`, :mod:`.agent_setup`, :mod:`.settings`), the runner (:mod:`.runner`) and its
pool (:mod:`.pool`), repeated runs (:mod:`.repeat`, :mod:`.noise`), where answers came from
(:mod:`.provenance`), merging sharded reports (:mod:`.merge`) and accepting a change
(:mod:`.accept`).
"""
