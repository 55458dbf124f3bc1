"""``first``: always the first legal action; the weakest sensible baseline.

>>> agent({"legal_actions": [{"type": "draw"}, {"type": "pass"}]}, {})
{'type': 'draw'}
"""

from __future__ import annotations


def agent(observation: dict, configuration: dict) -> dict:
    """Return ``observation["legal_actions"][0]``."""
    return observation["legal_actions"][0]
