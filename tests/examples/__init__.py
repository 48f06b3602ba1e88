"""Tests of the worked ports under examples/ and the README's minimal adapter."""
