"""Confinement of untrusted code (sandbox, limits, budget, supervisor, run-as, the build's copy): used by every kind that runs it."""
