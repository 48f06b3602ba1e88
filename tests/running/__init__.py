"""Tests of running cases: one case's outcome, and the one engine behind run, grade and matrix."""
