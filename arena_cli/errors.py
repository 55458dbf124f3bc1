"""The two ways an ``arena`` command fails, mapped to exit codes by ``main``."""

from __future__ import annotations


class CommandError(Exception):
    """Bad input: arguments, rules or a bot file (exit code 2)."""


class FailureError(Exception):
    """The platform could not do it, e.g. no Docker engine (exit code 1)."""
