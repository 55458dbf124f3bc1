"""Fixtures of the browser tests: Debian's Chromium driven by Playwright against pytest-django's live server.

Never downloads a browser: Playwright launches /usr/bin/chromium. Screenshots go
to artifacts/screenshots/ (gitignored) for people to look at.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from browser_helpers import ARTIFACTS, watched
from testsupport import service_missing

CHROMIUM = os.environ.get("ARENA_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

@pytest.fixture(scope="module")
def browser():
    """Chromium for one test module; Playwright's event loop stops with it.

    While Playwright's sync API runs, an event loop sits on the test's thread,
    and Django would refuse the tests' plain synchronous ORM calls; the switch
    that allows them is on for exactly that time, never for other tests or the
    processes they start.
    """
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        service_missing("playwright (pip install -e '.[dev]')")
    if not os.path.exists(CHROMIUM):
        service_missing(f"Chromium at {CHROMIUM} (apt-get install -y chromium)")
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Shots:
    """Saves full-page screenshots named after the test."""

    def __init__(self, prefix: str):
        self.prefix = prefix
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def __call__(self, page, name: str) -> Path:
        path = ARTIFACTS / f"{self.prefix}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def shot(request):
    return Shots(request.node.name.replace("[", "-").replace("]", "").replace("/", "-"))


@pytest.fixture
def page(browser):
    """A 1280 px wide page; the test fails on any JavaScript error or CSP violation."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = watched(context)
    yield page
    context.close()
    assert not page.js_errors, f"JavaScript errors on the page: {page.js_errors}"
    assert not page.csp_violations, f"Content-Security-Policy violations: {page.csp_violations}"


@pytest.fixture
def phone(browser):
    """A 390 px phone; the test fails on any CSP violation."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = watched(context)
    yield page
    context.close()
    assert not page.csp_violations, f"Content-Security-Policy violations: {page.csp_violations}"


