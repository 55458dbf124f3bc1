"""Fixtures of the hostile-bot tests: every test runs on each isolating backend."""

from __future__ import annotations

import pytest


@pytest.fixture(
    params=[
        "process",
        pytest.param("docker", marks=pytest.mark.docker),
        pytest.param("docker-warm", marks=pytest.mark.docker),
    ]
)
def backend(request):
    """Each hostile test runs on the process backend (bwrap), on Docker, and on warm Docker seats."""
    if request.param.startswith("docker"):
        request.getfixturevalue("docker_client")
    else:
        request.getfixturevalue("bwrap_path")
    return request.param
