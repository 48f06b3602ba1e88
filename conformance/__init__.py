"""pi-conformance: an executable, language-neutral standard for the course's chapters 03-04."""

__version__ = "0.1.0"
