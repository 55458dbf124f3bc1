"""System checks of the matches app: the sandbox the worker path uses can make its seats."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register


@register()
def sandbox_work_dir_check(app_configs=None, **kwargs):
    if settings.SANDBOX_BACKEND not in ("docker", "auto"):
        return []
    from sandbox.docker_backend import work_dir_problem

    problem = work_dir_problem()
    return [Error(problem, id="matches.E001")] if problem else []
