"""Autograders a course uploads or commits: a Gradescope zip, a GitHub Classroom workflow.

``pi-conformance autograder gradescope`` writes the zip Gradescope takes (:mod:`.gradescope`);
``pi-conformance autograder github-classroom`` writes the workflow a course's template
repository holds (:mod:`.classroom`).
"""
