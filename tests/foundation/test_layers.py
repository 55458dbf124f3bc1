"""The pure libraries stay pure (issue 15 point 1): no module of engine/, sandbox/ or tournaments/
imports Django, DRF, Celery or an app of platform/, at module level or inside a function; the
tournament app's Django modules live in platform/tournaments_app/ (label ``tournaments``)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the root conftest.py (the module name ``conftest`` is tests/conftest.py's in this session)
_spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "conftest.py")
assert _spec is not None and _spec.loader is not None
_root = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_root)
APP_NAMES, PURE_FOLDERS, imports_an_app = _root.APP_NAMES, _root.PURE_FOLDERS, _root.imports_an_app


def test_no_module_of_a_pure_library_imports_django_or_a_platform_app():
    modules = [path for folder in PURE_FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]
    assert len(modules) > 30
    impure = [str(path.relative_to(ROOT)) for path in modules if imports_an_app(path)]
    assert impure == []


def test_the_check_sees_a_function_local_import_of_an_app(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def later():\n    from matches.models import Match\n    return Match\n")
    assert imports_an_app(probe)
    probe.write_text("import json\nfrom engine import cards\n")
    assert not imports_an_app(probe)
    assert {"django", "matches", "tournaments_app"} <= APP_NAMES and "tournaments" not in APP_NAMES


def test_the_tournament_app_keeps_its_label_and_migrations():
    from django.apps import apps

    config = apps.get_app_config("tournaments")
    assert config.name == "tournaments_app"
    assert Path(config.path) == ROOT / "platform" / "tournaments_app"
    assert (ROOT / "platform" / "tournaments_app" / "migrations" / "0001_initial.py").exists()
    assert not (ROOT / "tournaments" / "migrations").exists()


# --- the apps under platform/ form an order (issue 15 point 1) ---------------------------------
# A module of an app imports only its own app and the apps below it (lower first); apps on one
# line import neither each other nor anything above. ``api`` is the REST framework's base every
# app's apis.py builds on (authentication, throttles, permissions, pagination, the error format);
# only its URL map, which includes every app's, sits at the top. ``arena`` is the project: its settings,
# environment and queue names are configuration every layer reads; its Celery app knows the
# worker steps of matches; its URL map and server entry points sit above everything. Migrations are history and are not walked.
APP_ORDER: tuple[tuple[str, ...], ...] = (
    ("arena.settings", "arena.env", "arena.queues"),
    ("core",),
    ("api",),
    ("bots",),
    ("matches",),
    ("validation",),
    ("arena.celery",),
    ("ladders",),
    ("tournaments_app",),
    ("versiontests", "play"),
    ("accounts",),
    ("web",),
    ("api.urls",),
    ("arena",),
)
#: imports that still point up or sideways, each waiting for the move that removes it (none left:
#: issue 15 point 1). Strict: an entry whose import is gone fails the test until it is taken off,
#: so the list can only shrink. Nothing may be added to it.
KNOWN_OUT_OF_ORDER: dict[tuple[str, str], str] = {
}


def _layer(module: str) -> int | None:
    """The rank of the layer ``module`` belongs to, or None outside platform/'s apps."""
    best = None
    for rank, names in enumerate(APP_ORDER):
        for name in names:
            if module == name or module.startswith(name + "."):
                if best is None or len(name) > best[1]:
                    best = (rank, len(name))
    return None if best is None else best[0]


def _app(module: str) -> str:
    name = module.split(".")[0]
    return module if name == "arena" and module.count(".") == 0 else name


def _imports(path: Path, package: str) -> list[tuple[int, str]]:
    """Every absolute import in the module at ``path`` (module level and inside functions), with
    ``from x import y`` also read as ``x.y`` when y may be a module; relative ones resolved."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return found


def out_of_order(root: Path) -> list[tuple[str, str, int]]:
    """(module, imported module, line) of every import in platform/ that points up or sideways."""
    wrong = []
    for path in sorted((root / "platform").rglob("*.py")):
        relative = path.relative_to(root / "platform")
        if "migrations" in relative.parts:
            continue
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        source = _layer(module)
        if source is None:
            continue
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for line, imported in _imports(path, package):
            target = _layer(imported)
            if target is None or imported.split(".")[0] == module.split(".")[0]:
                continue
            if target > source or (target == source and _app(imported) != _app(module)):
                wrong.append((module, imported, line))
    return wrong


def test_every_import_inside_platform_points_down_the_app_order():
    found = {(module, imported): line for module, imported, line in out_of_order(ROOT)}
    unexpected = sorted(f"{module}:{line} imports {imported}" for (module, imported), line in found.items()
                        if (module, imported) not in KNOWN_OUT_OF_ORDER)
    gone = sorted(f"{module} -> {imported}" for module, imported in KNOWN_OUT_OF_ORDER if (module, imported) not in found)
    assert unexpected == [], "imports against the app order (tests/foundation/test_layers.py APP_ORDER)"
    assert gone == [], "these are fixed: take them off KNOWN_OUT_OF_ORDER"


def test_every_app_of_platform_has_its_place_in_the_order():
    apps = {p.name for p in (ROOT / "platform").iterdir() if (p / "__init__.py").exists()}
    placed = {name.split(".")[0] for names in APP_ORDER for name in names}
    assert apps == placed


def test_the_order_check_sees_upward_sideways_and_function_local_imports(tmp_path):
    for app in ("core", "bots", "play", "versiontests"):
        (tmp_path / "platform" / app).mkdir(parents=True)
        (tmp_path / "platform" / app / "__init__.py").write_text("")
    (tmp_path / "platform" / "core" / "views.py").write_text(
        "def later():\n    from bots.models import Bot\n    return Bot\n"
    )
    (tmp_path / "platform" / "play" / "views.py").write_text("from versiontests import selectors\n")
    (tmp_path / "platform" / "bots" / "views.py").write_text("from core import ratelimit\nfrom . import models\n")
    (tmp_path / "platform" / "core" / "migrations").mkdir()
    (tmp_path / "platform" / "core" / "migrations" / "0001_x.py").write_text("import bots.models\n")
    assert sorted(out_of_order(tmp_path)) == [
        ("core.views", "bots.models.Bot", 2),
        ("play.views", "versiontests.selectors", 1),
    ]
