"""Tests of the fixture toolkit: fixtures new, lint, coverage, regen, export."""
