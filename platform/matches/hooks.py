"""What a stored result does beyond the match: the table ``settings.MATCH_RESULT_HOOKS``.

The table, in ``arena.settings``, names per match kind the functions (dotted paths, as
``AUTHENTICATION_BACKENDS`` does) that ``matches.services`` calls, in that order, inside the
transaction that stores the result: a result and its consequences (ratings, standings, a
version's status, the home page's counts) are written together, exactly once. The apps that own
those consequences sit above this one, so the table is read here by name: matches imports none of
them: ``{"ladder": ["web.home.home_cache_clear", "ladders.services.ladder_match_finish"], ...}``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.utils.module_loading import import_string


def hooks_for(kind: str) -> list[Callable]:
    """The functions a finished match of ``kind`` calls, in the table's order (none for a kind it
    does not name)."""
    return [import_string(path) for path in settings.MATCH_RESULT_HOOKS.get(kind, ())]


def run(match) -> None:
    """Call each hook of ``match.kind`` with the match (done or failed); an exception rolls the whole
    result back."""
    for hook in hooks_for(match.kind):
        hook(match)
