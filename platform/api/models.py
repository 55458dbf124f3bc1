"""API tokens and challenges: the only data the API app owns."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A named personal access token; only the SHA-256 of its key is stored."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=64)
    # The first characters of the key, shown so a user can tell tokens apart.
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.user} token {self.name!r} ({self.prefix}…)"


class Challenge(models.Model):
    """An unranked match a user asked for: their bot against a public bot under a ladder's rules."""

    challenger = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges")
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="challenge")
    ladder = models.ForeignKey("ladders.Ladder", null=True, on_delete=models.SET_NULL, related_name="challenges")
    #: the client address it was asked from (core.clientip): the pending cap counts it as well as the
    #: account, so opening accounts does not multiply it; "" when the server gave none
    address = models.CharField(max_length=45, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["address", "created_at"], name="api_challenge_address")]

    def __str__(self) -> str:
        return f"challenge by {self.challenger}: match {self.match_id}"
