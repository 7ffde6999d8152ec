"""Strict and canonical JSON, dialects, the thread log, the reducer, matchers, schemas and
reason codes: what every other part builds on.
"""
