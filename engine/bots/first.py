"""``first``: always the first legal action; the weakest sensible baseline.

>>> agent({"legal_actions": [{"type": "draw"}, {"type": "pass"}]}, {})
{'type': 'draw'}
"""

from __future__ import annotations

from typing import Any


def agent(observation: dict[str, Any], configuration: dict[str, Any]) -> dict[str, Any]:
    """Return ``observation["legal_actions"][0]``."""
    legal: list[dict[str, Any]] = observation["legal_actions"]
    return legal[0]
