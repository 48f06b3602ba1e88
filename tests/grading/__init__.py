"""Tests of grading one submission: rubric, scoring, attribution, held-out sets, report formats."""
