"""Names of kept (cached) parts made of what they show: one place for the digest with which the
ladder and tournament pages and their API answers name what they keep, so that any change of what
is shown is a new name and no hook has to drop the old one."""

from __future__ import annotations

import hashlib


def digest(*parts) -> str:
    """A short name for what ``parts`` hold (their ``repr``): a cache key made of what a page or
    answer shows, so that any change of it is a new key.

    >>> digest(1, "a") == digest(1, "a") != digest(1, "b")
    True
    """
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]
