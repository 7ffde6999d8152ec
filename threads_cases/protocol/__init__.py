"""The driver protocol (spec/driver-protocol.md): the client that drives an implementation
process and the server loop that serves one.
"""
