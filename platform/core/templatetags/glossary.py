"""The glossary's words in templates: ``{% load glossary %}{{ ladder.deals|count:"deal" }}``
writes "1 deal" / "3 deals" (engine.glossary, the one place of those words)."""

from __future__ import annotations

from django import template

from engine import glossary

register = template.Library()


@register.filter
def count(value, word: str) -> str:
    """``value`` with the glossary's ``word`` in the right number (empty for no value)."""
    if value is None or value == "":
        return ""
    return glossary.count(int(value), word)
