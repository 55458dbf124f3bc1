"""The pure libraries stay pure (issue 15 point 1): no module of engine/, sandbox/ or tournaments/
imports Django, DRF, Celery or an app of platform/, at module level or inside a function; the
tournament app's Django modules live in platform/tournaments_app/ (label ``tournaments``)."""

from __future__ import annotations

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
