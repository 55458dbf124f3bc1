"""What a locked-out login gets (``AXES_LOCKOUT_CALLABLE``): a clear message with the lock's end,
as a page for the site and the admin, as the API's JSON error for ``/api/``."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.utils import timezone

#: the answer's status, as for every rate limit of the site
STATUS = 429


def lockout_message(seconds: int) -> str:
    minutes = max(1, round(seconds / 60))
    until = timezone.now() + timedelta(seconds=seconds)
    return (
        f"too many failed logins for this account or from your address: logins are locked for "
        f"{minutes} minute{'s' if minutes != 1 else ''} (until {until:%H:%M} UTC); every failed try "
        "meanwhile starts the wait again"
    )


def lockout_response(request, response=None, credentials=None):
    """The lock lasts ``AXES_COOLOFF_TIME`` from the last failure, which is this very attempt."""
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    message = lockout_message(seconds)
    if request.path.startswith("/api/"):
        answer = JsonResponse({"detail": message, "retry_after": seconds}, status=STATUS)
    else:
        answer = render(request, "accounts/locked_out.html", {"message": message[0].upper() + message[1:]},
                        status=STATUS)
    answer["Retry-After"] = str(seconds)
    return answer
