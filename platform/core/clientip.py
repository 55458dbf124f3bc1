"""The client's address, in one place: login throttling (django-axes), the API's rate limits and
the sign-up limit all count by it.

It is the connection's ``REMOTE_ADDR``, unless ``settings.TRUSTED_PROXIES`` (N > 0) reverse proxies
stand in front of the site: then it is the N-th address from the right of ``X-Forwarded-For``, the
one the outermost trusted proxy saw (DRF's ``NUM_PROXIES`` rule, set from the same setting). Every
address left of it was written by the client and is never trusted.
"""

from __future__ import annotations

import ipaddress

from django.conf import settings


def client_address(request) -> str:
    """The address to count this request's attempts by (``""`` when the server gave none)."""
    meta = getattr(request, "META", {})
    remote = meta.get("REMOTE_ADDR", "") or ""
    proxies = settings.TRUSTED_PROXIES
    forwarded = meta.get("HTTP_X_FORWARDED_FOR", "")
    if proxies > 0 and forwarded:
        addresses = [part.strip() for part in forwarded.split(",")]
        chosen = addresses[-min(proxies, len(addresses))]
        try:  # a proxy writes addresses; anything else (a misconfigured chain) counts as the connection
            return str(ipaddress.ip_address(chosen))
        except ValueError:
            return remote
    return remote
