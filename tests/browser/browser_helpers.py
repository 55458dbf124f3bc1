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


#: Runs before any script of every page (Playwright injects it; the page's CSP does not apply):
#: each Content-Security-Policy violation is handed to the test through the ``cspViolation`` binding.
_REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (e) => {
  window.cspViolation([e.violatedDirective, e.blockedURI || "inline", e.sourceFile || location.href,
                       e.lineNumber, (e.sample || "").slice(0, 80)].join(" | "));
});
"""


def watched(context):
    """A new page of ``context`` that records JavaScript errors and CSP violations.

    ``page.js_errors`` and ``page.csp_violations`` are lists; Chromium reports a
    violation both as a ``securitypolicyviolation`` event and as a console error,
    and both are kept (the console also sees violations outside any document's events).
    """
    violations: list[str] = []
    context.expose_function("cspViolation", lambda text: violations.append(text))
    context.add_init_script(_REPORT_CSP_VIOLATIONS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "console",
        lambda msg: violations.append(f"console: {msg.text}")
        if msg.type == "error" and "Content Security Policy" in msg.text
        else None,
    )
    page.js_errors = errors
    page.csp_violations = violations
    return page


def too_wide(page, width: int) -> list[str]:
    """[] when the page fits ``width``; else why the document scrolls sideways (a wide table may
    scroll in its own region, the page itself may not), naming the innermost elements past the edge."""
    wide = page.evaluate("document.documentElement.scrollWidth")
    if wide <= width:
        return []
    past = page.evaluate(
        "(w) => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > w + 1"
        " && ![...e.children].some((c) => c.getBoundingClientRect().right > w + 1)).slice(0, 5)"
        ".map((e) => `${e.tagName.toLowerCase()}.${e.className} (${Math.round(e.getBoundingClientRect().right)} px)`).join(', ')",
        width,
    )
    return [f"{wide} px wide at {width} px: {past}"]
