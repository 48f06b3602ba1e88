"""Report writers, one module per format, each turning a :class:`SubmissionResult` into text.

``terminal`` (the summary ``grade`` prints), ``markdown``, ``junit`` (JUnit XML),
``gradescope`` (Gradescope's ``results.json``) and ``json_report`` (everything, for tools).
``conformance.farm.report_files`` writes them to files.
"""
