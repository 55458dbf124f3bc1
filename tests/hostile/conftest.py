"""Fixtures of the hostile-bot tests: every test runs on each isolating backend."""

from __future__ import annotations

import pytest


@pytest.fixture(params=["process", pytest.param("docker", marks=pytest.mark.docker)])
def backend(request):
    """Each hostile test runs on the process backend (bwrap) and on Docker."""
    if request.param == "docker":
        request.getfixturevalue("docker_client")
    else:
        request.getfixturevalue("bwrap_path")
    return request.param
