"""`make check` is the fast loop: lint, strict types on the pure libraries, the fast tests;
the doctests of every pure module run in the suite and no Django app module is imported
to collect them (issue 15 point 5)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STRICT_FLAGS = (
    "disallow_any_generics",
    "disallow_subclassing_any",
    "disallow_untyped_calls",
    "disallow_untyped_defs",
    "disallow_incomplete_defs",
    "check_untyped_defs",
    "disallow_untyped_decorators",
    "warn_return_any",
    "no_implicit_reexport",
    "strict_equality",
    "extra_checks",
)


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_make_check_runs_lint_types_and_the_tests_that_are_neither_slow_nor_need_a_service():
    plan = subprocess.run(
        ["make", "-n", "check"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    commands = [line.strip() for line in plan.splitlines()]
    assert any(c.endswith("ruff check .") for c in commands), plan
    assert any(c.endswith("/mypy") for c in commands), plan
    assert '-m "not slow and not services and not docker"' in plan, plan
    assert "-u DATABASE_URL -u REDIS_URL" in plan, plan  # no service even where one is set


def test_mypy_is_in_the_dev_extra_and_strict_on_engine_sandbox_and_the_pure_tournament_code():
    config = pyproject()
    assert any(r.startswith("mypy") for r in config["project"]["optional-dependencies"]["dev"])
    mypy = config["tool"]["mypy"]
    assert "engine" in mypy["files"] and "platform" in mypy["files"]
    strict = [o for o in mypy["overrides"] if "engine.*" in o["module"]]
    assert len(strict) == 1
    assert {"engine.*", "sandbox.*", "tournaments.pairing", "tournaments.rating"} <= set(strict[0]["module"])
    assert all(strict[0].get(flag) is True for flag in STRICT_FLAGS)


def test_plain_pytest_collects_the_doctests_of_pure_modules_and_imports_no_app_module():
    listing = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-p", "no:django", "engine", "sandbox", "tournaments", "arena_cli"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert listing.returncode == 0, listing.stdout + listing.stderr
    items = [line for line in listing.stdout.splitlines() if "::" in line]
    files = {item.split("::")[0] for item in items}
    assert {"engine/cards.py", "sandbox/limits.py", "tournaments/pairing.py", "tournaments/rating.py",
            "arena_cli/verdict.py"} <= files
    app_modules = {"models", "services", "selectors", "views", "admin", "apps", "urls", "demo"}
    assert not {f for f in files if f.startswith("tournaments/") and Path(f).stem in app_modules}
    assert "platform/tournaments_app/services.py" not in listing.stdout  # it has examples, but imports Django
