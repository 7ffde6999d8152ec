"""The baseline (spec/replay.md section 12): the file (:mod:`.file`) and ``baseline update``
/ ``baseline prune`` (:mod:`.edit`).
"""
