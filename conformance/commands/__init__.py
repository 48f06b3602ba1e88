"""The subcommands of ``pi-conformance``, one module each with a ``register`` function."""
