"""What other apps run when a match of their kind finishes: a plain function registry.

Ladders, tournaments and the bots app (validation) register one function per
match kind in their ``AppConfig.ready``. ``matches.services`` calls them inside
the transaction that stores the result, so a result and its consequences
(ratings, standings, a version's status) are written together, exactly once.

>>> register("ladder", lambda match: None)  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable

_HOOKS: dict[str, list[Callable]] = {}


def register(kind: str, hook: Callable) -> None:
    """Call ``hook(match)`` whenever a match of ``kind`` ends (done or failed)."""
    hooks = _HOOKS.setdefault(kind, [])
    if hook not in hooks:
        hooks.append(hook)


def unregister(kind: str, hook: Callable) -> None:
    if hook in _HOOKS.get(kind, []):
        _HOOKS[kind].remove(hook)


def run(match) -> None:
    """Run the hooks of ``match.kind``; an exception rolls the whole result back."""
    for hook in list(_HOOKS.get(match.kind, [])):
        hook(match)
