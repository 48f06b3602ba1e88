"""Judging: comparing observations with expectations, and saying what diverged and why."""
