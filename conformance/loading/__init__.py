"""Loading: fixture files into cases (or broken cases, never dropped), and selecting among them."""
