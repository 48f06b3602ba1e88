"""Tests of loading fixture files into cases: the loader, shared files."""
