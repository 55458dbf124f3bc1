"""Small builders for platform tests: users, bots, uploads, zips, played matches."""

from __future__ import annotations

import io
import stat
import zipfile

from testsupport import make_user  # noqa: F401  (re-exported for the tests here)

GOOD_BOT = b"""def agent(observation, configuration):
    print("seat", observation["seat"], "plays")
    return observation["legal_actions"][0]
"""

# Prints on every decision and crashes on its third.
CRASHING_BOT = b"""calls = 0


def agent(observation, configuration):
    global calls
    calls += 1
    print("decision", calls, flush=True)
    if calls == 3:
        print("about to divide by zero")
        return 1 // 0
    return observation["legal_actions"][0]
"""


def good_bot(tag: str = "") -> bytes:
    """A valid bot; a different ``tag`` gives different bytes (a new version)."""
    return GOOD_BOT + f"# {tag}\n".encode()




def make_zip(entries: dict[str, bytes], *, symlinks: tuple[str, ...] = ()) -> bytes:
    """A zip with the given entries; names in ``symlinks`` are stored as symbolic links."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if name in symlinks:
                info.external_attr = (stat.S_IFLNK | 0o777) << 16
            else:
                info.external_attr = (stat.S_IFREG | 0o644) << 16
            archive.writestr(info, content)
    return buffer.getvalue()
