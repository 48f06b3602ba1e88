"""Deployment: the GitHub Classroom workflow a course commits, the wheel a bundle carries, ``doctor``.

``pi-conformance autograder github-classroom`` writes the workflow a course's template
repository holds (:mod:`.classroom`); ``pi-conformance autograder gradescope`` writes the zip
Gradescope takes, built in :mod:`conformance.gradescope.bundle` with the wheel from :mod:`.wheel`.
"""
