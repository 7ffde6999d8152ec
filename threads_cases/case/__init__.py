"""The case format: the case directory (loading, atomic writing, fingerprint), saving a turn,
credential scanning and redaction, turn listing and drafting.
"""
