"""Plain helpers of the browser tests (not fixtures): the artifacts folder and logging in."""

from __future__ import annotations

from pathlib import Path

#: axe-core, installed by deploy/ensure-test-tools.sh (make install and make test run it)
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "correct horse battery"


def login(page, live_server, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


def axe_violations(page) -> list[str]:
    """axe-core's serious and critical violations of the page as it is now, one line per node.

    The page's Content-Security-Policy forbids inline scripts, so axe is evaluated from the test
    (Playwright's evaluate runs outside the CSP)."""
    page.evaluate(AXE.read_text())
    found = page.evaluate(
        """async () => {
        const result = await axe.run(document, {resultTypes: ["violations"]});
        return result.violations.filter(v => v.impact === "serious" || v.impact === "critical")
          .flatMap(v => v.nodes.map(n => `${v.id} (${v.impact}): ${n.target.join(" ")}: ${n.failureSummary.split("\\n")[1] || ""}`));
    }"""
    )
    return found
