"""The examples in the docstrings of the pure tournament and rating modules run as written."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module",
    [
        "tournaments.tables",
        "tournaments.schedule",
        "tournaments.designs",
        "tournaments.seating",
        "tournaments.pairing",
        "tournaments.standings",
        "ladders.ratings",
    ],
)
def test_docstring_examples_hold(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.attempted > 0, f"{module} has no examples"
    assert result.failed == 0
