"""The Python reference implementation: agent, scripted model, sandboxes, the turn runtime,
replay of a case and the Thread recording API.
"""
