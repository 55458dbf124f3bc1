"""Rate limits on what costs worker time and on password guesses: uploads, match requests and logins,
per account and per client address (``core.ratelimit``, ``settings.API_THROTTLE_RATES``)."""

from __future__ import annotations

from core import ratelimit
from rest_framework.throttling import BaseThrottle


class _WriteThrottle(BaseThrottle):
    """Counts writes by the account and by the client address; reads are never limited."""

    scope = ""

    def allow_request(self, request, view):
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        self._wait = ratelimit.hit(self.scope, request)
        return self._wait is None

    def wait(self):
        return self._wait


class UploadThrottle(_WriteThrottle):
    scope = "uploads"


class MatchRequestThrottle(_WriteThrottle):
    scope = "challenges"


class LoginThrottle(_WriteThrottle):
    """Token requests: counted per address, whoever they claim to be (and locked by axes on failures)."""

    scope = "login"
