"""Tests of the worked ports under examples/ and the manual's minimal adapter (docs/checking.md)."""
