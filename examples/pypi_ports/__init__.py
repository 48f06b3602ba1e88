"""Bindings of two Python ports of upstream pi-agent-core on PyPI, each run from its own virtual environment.

Written from docs/porting.md ("The pi-agent-core-1 binding") alone; neither port is a dependency
of pi-conformance. See README.md for the commands and what each port passes.
"""
