"""Grading: rubric scores, feedback students can act on, report formats and batch grading.

One job per module:

- ``rubric``: load and check a rubric of a profile (``default_rubric.yaml`` for the course,
  ``default_rubric_pi-ai-1.yaml`` for pi-ai-1, grouped by area, ship with the package).
- ``scoring``: turn case outcomes into per-case, per-lab (per-area) and total points.
- ``grader``: grade one submission without pytest (load, resolve, run, always close).
- ``status``: say what happened to a submission (ok, build-failed, crashed, timed-out, ...).
- ``feedback``: the per-case text a student reads.
- ``formats``: terminal, Markdown, JUnit XML, Gradescope ``results.json`` and JSON writers.
- ``batch``, ``progress``, ``shard``, ``gradebook``: a class at once, spread over machines.
- ``baseline``: known failures of a port, for ``pi-conformance run --baseline``.
"""
