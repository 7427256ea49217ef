"""The ``sengen`` command line (one module per command group)."""
