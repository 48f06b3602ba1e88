"""Tests of the suite's mutation score."""
