"""The text a student (or a porter) reads about a case: what failed, what the value says, what to look at.

- ``failure_report``: the full feedback for one failed case, as every channel prints it;
- ``readings``: what a diverging value says about the bug ("the wrong turn was used");
- ``case_feedback``: a graded case's text in every report format (whole clauses, excuses);
- ``featured``: which failing cases a report shows in full first, one per cause.

It words what :mod:`conformance.judging` decides: which clause bears on a divergence and
which hint fits (``judging/bearing.py``), and the meaning of a special value, which the
runner attaches to a divergence's note as it finds it (``judging/glossary.py``). Report
formats (``conformance/reports``, ``conformance/gradescope``) lay the text out; they write no
feedback of their own.
"""
