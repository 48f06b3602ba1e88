"""Tests of reports: the HTML pages and sites, the pi-ai-1 compatibility page."""
