"""Bots and their immutable versions: the uploaded bytes live in the database."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class Bot(models.Model):
    """A user's bot: a name and a series of uploaded versions."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots")
    name = models.CharField(max_length=64)
    description = models.TextField(blank=True, max_length=2000)
    source_public = models.BooleanField(
        default=False, help_text="Let everyone download the source of this bot's versions."
    )
    # The owner's pick among the active versions; empty means the newest active one plays.
    pinned_version = models.ForeignKey(
        "BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="bot_name_unique_per_owner"),
        ]

    def __str__(self) -> str:
        return f"{self.owner.username}/{self.name}"

    def get_absolute_url(self) -> str:
        return reverse("bots:detail", args=[self.pk])


class BotVersion(models.Model):
    """One upload of a bot, never changed after it is stored (only its validation status moves)."""

    class Status(models.TextChoices):
        VALIDATING = "validating", "validating"
        ACTIVE = "active", "active"
        REJECTED = "rejected", "rejected"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    filename = models.CharField(max_length=255)
    source = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    uploaded_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.VALIDATING)
    rejection_reason = models.TextField(blank=True)
    validation_log = models.TextField(blank=True)
    validated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["bot", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "sha256"], name="bot_version_bytes_unique_per_bot"),
            models.UniqueConstraint(fields=["bot", "number"], name="bot_version_number_unique_per_bot"),
            models.CheckConstraint(
                condition=models.Q(status__in=["validating", "active", "rejected"]),
                name="bot_version_status_valid",
            ),
            models.CheckConstraint(
                condition=~models.Q(status="rejected") | ~models.Q(rejection_reason=""),
                name="bot_version_rejection_has_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} v{self.number}"

    def get_absolute_url(self) -> str:
        return reverse("bots:version", args=[self.bot_id, self.number])

    @property
    def label(self) -> str:
        """Display name used in seats and tables: ``owner/bot v3``."""
        return f"{self.bot} v{self.number}"
