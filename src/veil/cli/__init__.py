"""The ``veil`` command-line interface."""
