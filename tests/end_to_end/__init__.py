"""Tests of what users install: the wheel in a fresh virtualenv."""
