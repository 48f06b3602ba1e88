"""Transports that reach an implementation: in-process Python bindings, programs, Node.js projects."""
