"""The conformance suite as a pytest test module."""
