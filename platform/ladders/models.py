"""Ladders: a rule set and format, the bots entered, and every rating change of every match."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse

from sandbox.limits import Limits

from . import ratings

_LIMITS = Limits()


class Ladder(models.Model):
    """A standing competition: matchmaking keeps its entries playing under one rule set."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, max_length=2000)
    rules = models.JSONField(
        default=dict,
        help_text='RULES.md options as JSON, e.g. {"players": 2, "rounds": 2}; '
        "missing options take their defaults; stored complete.",
    )
    seats = models.PositiveSmallIntegerField(default=2, help_text="Seats per match, 2 to 10; equals rules.players.")
    games = models.PositiveIntegerField(
        default=1, help_text="Deals per match; with duplicate rotation each deal is played once per seat rotation."
    )
    duplicate = models.BooleanField(default=True, help_text="Rotate the seats over the same deals.")
    # Copied into every ladder match (Match.time_per_decision / time_bank).
    time_per_decision = models.FloatField(
        default=_LIMITS.time_per_decision,
        help_text="Seconds per decision (the bots' clock in this ladder's matches).",
    )
    time_bank = models.FloatField(
        default=_LIMITS.time_bank,
        help_text="Seconds of extra time per match, beyond the time per decision.",
    )
    max_pending = models.PositiveSmallIntegerField(
        default=4, help_text="At most this many of the ladder's matches are queued or running at once."
    )
    fault_limit = models.PositiveSmallIntegerField(
        default=3, help_text="A bot that forfeits this many ladder matches in a row is suspended."
    )
    active = models.BooleanField(default=True, help_text="Matchmaking runs only for active ladders.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=models.Q(seats__gte=2, seats__lte=10), name="ladder_seats_2_to_10"),
            models.CheckConstraint(condition=models.Q(games__gte=1), name="ladder_games_positive"),
            models.CheckConstraint(condition=models.Q(max_pending__gte=1), name="ladder_max_pending_positive"),
            models.CheckConstraint(condition=models.Q(fault_limit__gte=1), name="ladder_fault_limit_positive"),
            models.CheckConstraint(
                condition=models.Q(time_per_decision__gt=0, time_bank__gt=0), name="ladder_times_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("ladders:detail", args=[self.slug])

    def clean(self) -> None:
        from .services import LadderError, ladder_rules_clean

        try:
            self.rules = ladder_rules_clean(self.rules, self.seats)
        except LadderError as exc:
            raise ValidationError({"rules": str(exc)}) from None


class LadderEntry(models.Model):
    """A bot on a ladder: its current rating and whether it is matched."""

    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        LEFT = "left", "left"
        SUSPENDED = "suspended", "suspended"

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="entries")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ladder_entries")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    rating = models.DecimalField(max_digits=7, decimal_places=2, default=ratings.START)
    matches_played = models.PositiveIntegerField(default=0)
    entered_at = models.DateTimeField(auto_now_add=True)
    # When matchmaking last gave this entry a match: the longest waiting goes first.
    last_matched_at = models.DateTimeField(null=True, blank=True)
    # Ladder matches forfeited in a row; a match without forfeit resets it.
    fault_streak = models.PositiveSmallIntegerField(default=0)
    suspended_reason = models.TextField(blank=True)
    # The version that faulted: re-entering needs a different playing version.
    suspended_version = models.ForeignKey(
        "bots.BotVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["ladder", "-rating", "pk"]
        verbose_name_plural = "ladder entries"
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot"], name="ladder_entry_unique_bot"),
            models.CheckConstraint(
                condition=models.Q(status__in=["active", "left", "suspended"]), name="ladder_entry_status_valid"
            ),
            models.CheckConstraint(
                condition=~models.Q(status="suspended") | ~models.Q(suspended_reason=""),
                name="ladder_entry_suspension_has_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot} on {self.ladder}"

    def get_absolute_url(self) -> str:
        return reverse("ladders:entry", args=[self.ladder.slug, self.bot_id])

    @property
    def elo(self) -> ratings.Rating:
        return ratings.Rating(self.rating, self.matches_played)


class LadderMatch(models.Model):
    """Links a match of kind "ladder" to its ladder; ``rated`` once its rating changes are stored."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="ladder_matches")
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="ladder_match")
    rated = models.BooleanField(default=False)

    class Meta:
        ordering = ["-match_id"]
        verbose_name_plural = "ladder matches"

    def __str__(self) -> str:
        return f"{self.ladder}: match {self.match_id}"


class RatingChange(models.Model):
    """One bot version's rating before and after one rated ladder match."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="rating_changes")
    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="rating_changes")
    entry = models.ForeignKey(LadderEntry, on_delete=models.CASCADE, related_name="rating_changes")
    bot_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="rating_changes")
    rank = models.PositiveSmallIntegerField()
    before = models.DecimalField(max_digits=7, decimal_places=2)
    after = models.DecimalField(max_digits=7, decimal_places=2)
    # The entry's rated matches after this one (the interval's n).
    matches_after = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        # Rating changes are written under the ladder's row lock, so pk order is the order they were rated.
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["match", "entry"], name="rating_change_once_per_match_entry"),
            models.CheckConstraint(condition=models.Q(rank__gte=1), name="rating_change_rank_positive"),
        ]
        indexes = [models.Index(fields=["ladder", "entry"], name="rating_change_ladder_entry")]

    def __str__(self) -> str:
        return f"{self.bot_version} in match {self.match_id}: {self.before} -> {self.after}"

    @property
    def delta(self) -> Decimal:
        return self.after - self.before
