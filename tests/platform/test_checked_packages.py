"""A worker checks each upload once per process: matches of the same version reuse the checked
package; other bytes, another name or other limits are checked again, and a refusal is never kept."""

from __future__ import annotations

import dataclasses

import pytest

from matches import sandboxing
from sandbox.limits import UploadLimits
from sandbox.package import BotPackage, PackageError

BOT = b"def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


@pytest.fixture
def checks(monkeypatch):
    """The calls of BotPackage.from_bytes (the real check, counted), on an empty cache."""
    monkeypatch.setattr(sandboxing, "_checked", type(sandboxing._checked)())
    calls = []
    real = BotPackage.from_bytes.__func__

    def counted(cls, filename, data, limits):
        calls.append(filename)
        return real(cls, filename, data, limits)

    monkeypatch.setattr(BotPackage, "from_bytes", classmethod(counted))
    return calls


def test_the_same_upload_is_checked_once_and_other_bytes_names_or_limits_again(checks):
    limits = UploadLimits()
    first = sandboxing.checked_package("a.py", BOT, limits)
    assert sandboxing.checked_package("a.py", bytes(BOT), limits) is first
    assert checks == ["a.py"]
    sandboxing.checked_package("a.py", BOT + b"# changed\n", limits)
    sandboxing.checked_package("b.py", BOT, limits)
    sandboxing.checked_package("a.py", BOT, dataclasses.replace(limits, py_bytes=limits.py_bytes - 1))
    assert checks == ["a.py", "a.py", "b.py", "a.py"]


def test_a_refused_upload_is_refused_every_time(checks):
    tight = dataclasses.replace(UploadLimits(), py_bytes=10)
    for _ in range(2):
        with pytest.raises(PackageError, match="a.py"):
            sandboxing.checked_package("a.py", BOT, tight)
    assert checks == ["a.py", "a.py"]


def test_the_least_recently_used_leave_once_the_cache_is_over_its_bytes(checks, monkeypatch):
    monkeypatch.setattr(sandboxing, "CHECKED_PACKAGE_BYTES", 3 * 2 * len(BOT) + 100)  # three of these
    limits = UploadLimits()
    names = [f"bot{i}.py" for i in range(4)]
    for name in names:
        sandboxing.checked_package(name, BOT, limits)
    sandboxing.checked_package("bot0.py", BOT, limits)  # the oldest went out for bot3
    sandboxing.checked_package("bot3.py", BOT, limits)  # still in
    assert checks == [*names, "bot0.py"]
