#!/usr/bin/env bash
# System tools some tests need: bubblewrap (the process sandbox's namespaces),
# Chromium (the browser tests drive Debian's build through Playwright), node and
# npm (the viewer's JavaScript tests; npm installs the browser tests' axe-core).
# Installed when we are root on Debian/Ubuntu; otherwise the tests that need
# them skip (or fail under ARENA_REQUIRE_SERVICES=1) with a message naming them.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A wanted=([bwrap]=bubblewrap [chromium]=chromium [node]=nodejs [npm]=npm)
missing=()
for tool in "${!wanted[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("${wanted[$tool]}")
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing test tools: ${missing[*]}" >&2
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "note: not installed: ${missing[*]} (apt-get install ${missing[*]}); tests needing them will skip" >&2
    fi
fi

# axe-core (the accessibility checks of tests/browser/test_accessibility.py): the version pinned in
# tests/browser/package-lock.json, into tests/browser/node_modules/ (gitignored), from the npm registry.
browser_tools=tests/browser
installed=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$browser_tools/node_modules/axe-core/package.json" 2>/dev/null || true)
pinned=$(sed -n '/"node_modules\/axe-core"/,/}/s/^ *"version": "\(.*\)",$/\1/p' "$browser_tools/package-lock.json")
if [ "$installed" != "$pinned" ]; then
    if command -v npm >/dev/null 2>&1; then
        echo "installing axe-core $pinned for the browser tests" >&2
        npm ci --prefix "$browser_tools" --no-audit --no-fund --loglevel=error >/dev/null
    else
        echo "note: axe-core not installed (no npm); the accessibility tests will skip" >&2
    fi
fi
