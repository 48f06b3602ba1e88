"""Static HTML reports: a class overview, per-submission pages with trace diffs, a run's pages, a compliance matrix.

Every page is one self-contained file (inline CSS and SVG, no script, no external asset),
so a site works from ``file://`` and inside a zip. Everything that comes from a case, an
observation or a submission (names included) is HTML-escaped: student output is untrusted.
"""
