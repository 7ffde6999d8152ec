"""The driver protocol (spec/driver-protocol.md), in two halves: :mod:`.client` drives an
implementation (a driver process, or the in-process Python one) and :mod:`.server` serves the
Python implementation; ``python -m threads_cases.protocol.driver`` is the server's entry point.
"""
