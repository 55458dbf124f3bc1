#!/usr/bin/env bash
# Create the project's virtual environment. On Debian/Ubuntu the venv module
# lives in a separate package (python3-venv); install it when we may.
set -euo pipefail
python=${1:-python3}
venv=${2:-.venv}
if ! command -v "$python" >/dev/null 2>&1; then
    echo "error: $python not found; Uno Arena needs Python 3.11 or newer" >&2
    exit 1
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "error: $("$python" --version 2>&1) is too old; Uno Arena needs Python 3.11 or newer" >&2
    exit 1
fi
if "$python" -m venv "$venv" 2>/dev/null; then
    exit 0
fi
rm -rf "$venv"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing the Python venv module (apt-get install python3-venv)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    "$python" -m venv "$venv" && exit 0
fi
echo "error: '$python -m venv' does not work here; install python3-venv (sudo apt-get install python3-venv) and run again" >&2
exit 1
