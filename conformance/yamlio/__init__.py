"""YAML I/O: bounded parsing of untrusted files, node positions, in-place edits that keep bytes."""
