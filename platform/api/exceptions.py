"""One shape for every error of the API: ``{"detail": "...", "errors": {field: [...]}}``.

``errors`` is there only when fields were wrong. A refusal by a service (the
apps' ``ValueError`` subclasses named in ``settings.API_REFUSALS``, such as BotError) is
a 400 with its message, so a view never turns a user's mistake into a 500.
"""

from __future__ import annotations

import functools
import math

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, SuspiciousOperation
from django.http import JsonResponse
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


@functools.cache
def refusals(paths: tuple[str, ...]) -> tuple[type[Exception], ...]:
    """The service errors of ``settings.API_REFUSALS`` (dotted paths: the apps that raise them sit
    above this module, which imports none of them); each becomes a 400 with its message."""
    return tuple(import_string(path) for path in paths)


def _flatten(detail) -> dict[str, list[str]]:
    """DRF's nested error detail as ``{"field" or "field.sub": [messages]}``."""
    out: dict[str, list[str]] = {}

    def walk(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        elif isinstance(value, list) and value and all(not isinstance(v, dict | list) for v in value):
            out.setdefault(prefix or "non_field_errors", []).extend(str(v) for v in value)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                walk(f"{prefix}.{index}" if prefix else str(index), inner)
        else:
            out.setdefault(prefix or "non_field_errors", []).append(str(value))

    walk("", detail)
    return out


def _summary(errors: dict[str, list[str]]) -> str:
    field, messages = next(iter(errors.items()))
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{field}: {messages[0]}{more}" if field != "non_field_errors" else messages[0] + more


def exception_handler(exc, context):
    if isinstance(exc, refusals(tuple(settings.API_REFUSALS))):
        return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response(
            {"detail": f"the request body is larger than the limit of {limit} bytes"},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, SuspiciousOperation):  # too many fields, a malformed multipart body...
        return Response({"detail": f"request refused: {exc}"}, status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # an unexpected error: Django's 500 handling and logging take it
    # DRF has already turned Django's Http404 and PermissionDenied into its own shape in response.data.
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(data)
        body = {"detail": f"invalid input: {_summary(errors)}" if errors else "invalid input", "errors": errors}
    elif isinstance(data, dict) and set(data) == {"detail"}:
        body = {"detail": str(data["detail"])}
    else:
        errors = _flatten(data)
        body = {"detail": _summary(errors) if errors else str(exc), "errors": errors}
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        retry = max(1, math.ceil(exc.wait))
        body = {
            "detail": f"too many requests of this kind; retry in {retry} s",
            "retry_after": retry,
        }
        response["Retry-After"] = str(retry)
    response.data = body
    return response


@csrf_exempt  # a 404 changes nothing; without this a POST with a session cookie would get Django's HTML 403
def not_found(request, *args, **kwargs):
    """JSON 404 for any path under /api/ that names no endpoint."""
    return JsonResponse({"detail": f"no API endpoint at {request.path!r}; see /api/docs/"}, status=404)
