"""Running: the one loop over cases, one case run and judged, and the pytest front end."""
