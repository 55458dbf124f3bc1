"""Rate limits on what costs worker time: uploads and match requests (settings.API_THROTTLE_RATES)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class _WriteThrottle(SimpleRateThrottle):
    """Counts a user's (or an address's) writes; reads are never limited."""

    def get_rate(self):
        # Read per request (DRF makes a throttle per request), not at import: a changed setting applies.
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request, view):
        if request.user and request.user.is_authenticated:
            ident = f"user-{request.user.pk}"
        else:
            ident = f"addr-{self.get_ident(request)}"
        return f"throttle_{self.scope}_{ident}"


class UploadThrottle(_WriteThrottle):
    scope = "uploads"


class MatchRequestThrottle(_WriteThrottle):
    scope = "challenges"


class LoginThrottle(_WriteThrottle):
    """Password guesses: counted per address, whoever they claim to be."""

    scope = "login"
