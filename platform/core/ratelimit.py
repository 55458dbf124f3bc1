"""Rate limits by account and by client address, in one place (``settings.API_THROTTLE_RATES``).

A scope (``uploads``, ``challenges``, ``login``, ``signups``) has a rate per account (``scope``) and
one per client address (``scope_per_address``; ``core.clientip``), each ``"N/second|minute|hour|day"``.
A request is allowed only while both of its counters are under their rates, so opening more
accounts from one address does not multiply a quota. Anonymous requests count by address only.
The counters live in Django's cache (shared between processes only through ``CACHE_URL``).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

from .clientip import client_address

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """``"30/hour"`` -> (30, 3600); None or empty: no limit."""
    if not rate:
        return None
    number, _, period = rate.partition("/")
    return int(number), PERIODS[period.strip()[:1].lower()]


def _counters(scope: str, request) -> list[tuple[str, tuple[int, int]]]:
    """(cache key, (requests, seconds)) of each counter this request counts against."""
    rates = settings.API_THROTTLE_RATES
    found = []
    user = getattr(request, "user", None)
    account_rate = parse_rate(rates.get(scope))
    if user is not None and user.is_authenticated and account_rate:
        found.append((f"ratelimit:{scope}:user:{user.pk}", account_rate))
    address_rate = parse_rate(rates.get(f"{scope}_per_address", rates.get(scope)))
    if address_rate:
        found.append((f"ratelimit:{scope}:addr:{client_address(request)}", address_rate))
    return found


def wait(scope: str, request, *, now: float | None = None) -> float | None:
    """Seconds until one more request of ``scope`` is allowed, or None when it is allowed now."""
    now = time.time() if now is None else now
    waits = []
    for key, (limit, seconds) in _counters(scope, request):
        recent = [t for t in cache.get(key, []) if t > now - seconds]
        if len(recent) >= limit:
            waits.append(seconds - (now - min(recent)))
    return max(waits) if waits else None


def record(scope: str, request, *, now: float | None = None) -> None:
    """Count one request of ``scope`` on each of its counters."""
    now = time.time() if now is None else now
    for key, (_limit, seconds) in _counters(scope, request):
        recent = [t for t in cache.get(key, []) if t > now - seconds]
        cache.set(key, [*recent, now], seconds)


def hit(scope: str, request) -> float | None:
    """Count the request when it is allowed; returns None then, else the seconds to wait (nothing counted)."""
    now = time.time()
    waiting = wait(scope, request, now=now)
    if waiting is None:
        record(scope, request, now=now)
    return waiting
