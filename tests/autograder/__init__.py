"""Tests of autograder bundles (Gradescope, GitHub Classroom) and doctor."""
