"""Tests of differential fuzzing and the private grading set drawn with its strategies."""
