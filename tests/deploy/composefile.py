"""deploy/compose.yaml as compose reads it, for the tests: the files merged, variables
interpolated (compose's ``${VAR}``, ``${VAR:-default}``, ``${VAR-default}``, ``${VAR:?error}``,
``${VAR?error}``, ``$$``) and the services of the active profiles.

Only what the deploy files use is implemented; a form they do not use raises.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
_VARIABLE = re.compile(r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])((?:[^{}]|\{[^{}]*\})*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


class MissingVariable(ValueError):
    """A ``${VAR:?message}`` whose variable is unset or empty (compose refuses the file)."""


def raw(name: str = "compose.yaml") -> dict:
    """A deploy file as YAML, before interpolation."""
    return yaml.safe_load((DEPLOY / name).read_text())


def variables(value) -> set[str]:
    """Every variable ``value`` (a string, list or mapping, nested) names."""
    if isinstance(value, dict):
        return set().union(*(variables(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(variables(v) for v in value)) if value else set()
    if not isinstance(value, str):
        return set()
    found = set()
    for match in _VARIABLE.finditer(value):
        name = match.group(2) or match.group(5)
        if name:
            found.add(name)
        if match.group(4):
            found |= variables(match.group(4))
    return found


def interpolate(value, env: dict[str, str]):
    """``value`` with its variables replaced from ``env`` as compose does; MissingVariable for a
    required one that is unset or empty."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match) -> str:
        if match.group(1):
            return "$"
        name = match.group(2) or match.group(5)
        operator, argument = match.group(3), match.group(4) or ""
        current = env.get(name)
        unset_or_empty = not current if operator and operator.startswith(":") else current is None
        if operator in (":-", "-"):
            return interpolate(argument, env) if unset_or_empty else current
        if operator in (":?", "?"):
            if unset_or_empty:
                raise MissingVariable(f"{name}: {interpolate(argument, env)}")
            return current
        return current or ""

    return _VARIABLE.sub(replace, value)


def _merge(base, override):
    """Compose's merge of an override file: mappings merged, ``ports`` and other lists appended."""
    if isinstance(base, dict) and isinstance(override, dict):
        merged = dict(base)
        for key, value in override.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    if isinstance(base, list) and isinstance(override, list):
        return base + override
    return override


def load(env: dict[str, str], *files: str) -> dict:
    """The deploy files (default compose.yaml) merged in order and interpolated with ``env``
    (the whole model, every profile: compose interpolates before it applies profiles)."""
    model: dict = {}
    for name in files or ("compose.yaml",):
        model = _merge(model, raw(name))
    return interpolate(model, env)


def active_services(model: dict, profiles: set[str]) -> set[str]:
    """The services compose starts with these profiles: those with no ``profiles`` and those
    sharing one with ``profiles``."""
    return {
        name for name, service in model["services"].items()
        if not service.get("profiles") or set(service["profiles"]) & profiles
    }
