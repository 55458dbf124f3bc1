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
    # Set by matches.services.match_create when a version of the bot takes a seat in a match of a
    # kind in bots.selectors.EVENT_MATCH_KINDS, never cleared: bots then reads it without a query
    # of the matches app (which sits above bots).
    plays_in_events = models.BooleanField(
        default=False, editable=False,
        help_text="A version of this bot has had a seat in a ladder or tournament match: organizers may judge it.",
    )

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
    #: the validation's plan and results, one run per configuration (validation.configurations):
    #: [{"label": "4 seats", "match": id, "status": "pending|passed|failed", "reason": ""}]
    validation_runs = models.JSONField(default=list, blank=True)
    #: the newest validation match of this version (a Match id: bots sits below matches, so no foreign
    #: key), set by validation.services when it queues one; lists read it instead of the version's seats
    validation_match_id = models.PositiveBigIntegerField(
        null=True, blank=True, editable=False, help_text="id of the version's newest validation match, or null"
    )

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


class SourceAccess(models.Model):
    """One read of a bot's private part (source, validation log, seat log) by someone other than
    its owner: an organizer judging an entrant or a superuser. Written by the pages and the API
    that show it, read by superusers in the admin, never changed."""

    class What(models.TextChoices):
        SOURCE = "source", "source"
        VALIDATION_LOG = "validation_log", "validation log"
        SEAT_LOG = "seat_log", "seat log"

    # SET_NULL and the copies below: the record outlives the reader's account and the bot.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="source_accesses"
    )
    username = models.CharField(max_length=150)
    bot_version = models.ForeignKey(
        BotVersion, null=True, on_delete=models.SET_NULL, related_name="accesses"
    )
    label = models.CharField(max_length=255, help_text="owner/bot vN at the time of the read")
    what = models.CharField(max_length=16, choices=What.choices)
    match_id = models.PositiveBigIntegerField(null=True, blank=True, help_text="the match of a seat log")
    reason = models.CharField(max_length=200, help_text="why the reader was allowed")
    path = models.CharField(max_length=500, help_text="the page or API path of the read")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name = "source and log access"
        verbose_name_plural = "source and log accesses"

    def __str__(self) -> str:
        return f"{self.username} read {self.get_what_display()} of {self.label}"
