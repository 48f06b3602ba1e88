"""Helpers, fakes and JavaScript projects shared by the project's tests (see tests/README.md)."""
