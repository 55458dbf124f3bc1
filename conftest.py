"""The examples in the docstrings of the pure libraries run as tests of the suite.

Every module of engine/, sandbox/, tournaments/ and arena_cli/ (the command line) that imports neither Django nor a
platform app is collected as pytest's ``--doctest-modules`` would collect it (all of them:
the tournament app lives in platform/tournaments_app/, tests/foundation/test_layers.py keeps
these folders pure).
``pyproject.toml`` names these folders in ``testpaths``, so plain ``pytest`` (and
``make test``, ``make check``) runs them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

ROOT = Path(__file__).resolve().parent
#: the pure libraries and the command line (which speaks HTTP to the platform and imports none of it)
PURE_FOLDERS = ("engine", "sandbox", "tournaments", "arena_cli")
#: whose doctests run: every pure folder
DOCTEST_FOLDERS = PURE_FOLDERS
#: top-level names a pure module never imports: Django, DRF and the apps under platform/
APP_NAMES = frozenset(
    {"django", "rest_framework", "drf_spectacular", "celery"}
    | {p.name for p in (ROOT / "platform").iterdir() if (p / "__init__.py").exists()}
)
#: doctests known to be false, waiting for a fix in a module another change owns;
#: strict, so the entry fails once the example is right and must then be removed
KNOWN_FALSE: dict[str, str] = {}


def imports_an_app(path: Path) -> bool:
    """Whether the module at ``path`` imports Django or a platform app anywhere in it
    (module level or inside a function)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name.split(".")[0] in APP_NAMES for name in names):
            return True
    return False


def is_pure_module(path: Path) -> bool:
    """Whether ``path`` is a module of a pure library whose doctests this suite runs."""
    try:
        relative = path.resolve().relative_to(ROOT)
    except ValueError:
        return False
    parts = relative.parts
    return (
        path.suffix == ".py"
        and parts[0] in DOCTEST_FOLDERS
        and "migrations" not in parts
        and not imports_an_app(path)
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> DoctestModule | None:
    if is_pure_module(file_path):
        return DoctestModule.from_parent(parent, path=file_path)
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        reason = KNOWN_FALSE.get(item.name)
        if reason is not None and isinstance(item.parent, DoctestModule):
            item.add_marker(pytest.mark.xfail(reason=f"false example: {reason}", strict=True))
