"""Tests of judging an outcome: the matcher, failure groups, feedback hints, student text in messages."""
