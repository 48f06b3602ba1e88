"""Tests of the command line: selection, exit status, option checks, check."""
