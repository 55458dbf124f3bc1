#!/usr/bin/env bash
# System tools some tests need: bubblewrap (the process sandbox's namespaces),
# Chromium (the browser tests drive Debian's build through Playwright).
# Installed when we are root on Debian/Ubuntu; otherwise the tests that need
# them skip (or fail under ARENA_REQUIRE_SERVICES=1) with a message naming them.
set -euo pipefail
declare -A wanted=([bwrap]=bubblewrap [chromium]=chromium)
missing=()
for tool in "${!wanted[@]}"; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("${wanted[$tool]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing test tools: ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "note: not installed: ${missing[*]} (apt-get install ${missing[*]}); tests needing them will skip" >&2
fi
