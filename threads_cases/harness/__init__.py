"""The harness: discovery, the runner, the implementation registry, the conformance suite,
reports and the pytest plugin.
"""
