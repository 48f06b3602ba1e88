"""Gradescope, in one place.

The zip it runs (``bundle.py``, with ``setup.sh`` and ``run_autograder.sh``) and the results.json
it reads (``results.py``; ``case_state.py`` gives each test one of its five states).
"""
