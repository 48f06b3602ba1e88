"""Reports of a run: its summary and JSON, the static HTML sites, the pi-ai-1 compatibility page, the manual's CLI reference."""
