"""Version tests: the test (hypotheses, bounds, counts, verdict) and the link of each pair's match to it."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from tournaments.sprt import wald_bounds

#: the pentanomial cells, worst first: NEW's points in a pair of two games
PENTANOMIAL_LABELS = ("0", "½", "1", "1½", "2")


def empty_pentanomial() -> list[int]:
    return [0, 0, 0, 0, 0]


class VersionTest(models.Model):
    """An SPRT of NEW against OLD on duplicate deal pairs under a ladder's rules and clocks, unrated."""

    class Status(models.TextChoices):
        RUNNING = "running", "running"
        H1 = "H1", "H1 accepted"
        H0 = "H0", "H0 accepted"
        INCONCLUSIVE = "inconclusive", "inconclusive"
        CANCELLED = "cancelled", "cancelled"
        FAILED = "failed", "failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="version_tests")
    new_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    old_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    # The ladder that lent its rules and clocks; they are copied below, so editing or deleting
    # the ladder never changes a test under way.
    ladder = models.ForeignKey("ladders.Ladder", null=True, on_delete=models.SET_NULL, related_name="+")
    ladder_name = models.CharField(max_length=100)
    rules = models.JSONField(help_text="engine Rules.to_dict() of every pair (two players)")
    time_per_decision = models.FloatField(null=True, blank=True)
    time_bank = models.FloatField(null=True, blank=True)
    time_per_match = models.FloatField(null=True, blank=True)

    elo0 = models.FloatField(default=0.0)
    elo1 = models.FloatField(default=10.0)
    alpha = models.FloatField(default=0.05)
    beta = models.FloatField(default=0.05)
    max_pairs = models.PositiveIntegerField()
    # Pair i plays the deal of seed + i (its match's seed): the test is reproducible.
    seed = models.BigIntegerField()

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    reason = models.TextField(blank=True, help_text="why it failed or was cancelled")
    pentanomial = models.JSONField(default=empty_pentanomial, help_text="pairs by NEW's points 0, 1/2, 1, 3/2, 2")
    llr = models.FloatField(default=0.0)
    elo = models.FloatField(null=True, blank=True)
    elo_low = models.FloatField(null=True, blank=True)
    elo_high = models.FloatField(null=True, blank=True)
    # The next pair index to queue (pairs 0 .. next_pair - 1 have been queued at least once).
    next_pair = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["owner", "status"], name="versiontest_owner_status_idx")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=["running", "H1", "H0", "inconclusive", "cancelled", "failed"]),
                name="versiontest_status_valid",
            ),
            models.CheckConstraint(condition=models.Q(elo0__lt=models.F("elo1")), name="versiontest_elo0_below_elo1"),
            models.CheckConstraint(
                condition=models.Q(alpha__gt=0, alpha__lt=0.5, beta__gt=0, beta__lt=0.5),
                name="versiontest_error_rates_range",
            ),
            models.CheckConstraint(condition=models.Q(max_pairs__gte=1), name="versiontest_max_pairs_positive"),
            models.CheckConstraint(
                condition=~models.Q(new_version=models.F("old_version")), name="versiontest_two_versions"
            ),
        ]

    def __str__(self) -> str:
        return f"version test {self.pk}: {self.new_version} vs {self.old_version} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("versiontests:detail", args=[self.pk])

    @property
    def bounds(self) -> tuple[float, float]:
        """Wald's (lower, upper) LLR bounds: H0 at or below lower, H1 at or above upper."""
        return wald_bounds(self.alpha, self.beta)

    @property
    def pairs(self) -> int:
        return sum(self.pentanomial)

    @property
    def is_finished(self) -> bool:
        return self.status != self.Status.RUNNING


class VersionTestPair(models.Model):
    """One pair of a test: a match of one deal played twice with the seats swapped (NEW at seat 0).

    A pair whose match failed (platform trouble) is played again as a new row with the same
    ``index`` (so the same deal) and the next ``attempt``; at most one row of an index is counted.
    """

    class State(models.TextChoices):
        PLAYING = "playing", "queued or playing"
        COUNTED = "counted", "counted"
        FAILED = "failed", "failed (platform)"
        DISCARDED = "discarded", "not counted (the test had ended)"

    test = models.ForeignKey(VersionTest, on_delete=models.CASCADE, related_name="pair_rows")
    index = models.PositiveIntegerField()
    attempt = models.PositiveSmallIntegerField(default=1)
    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="version_test_pair")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PLAYING)
    points = models.FloatField(null=True, blank=True, help_text="NEW's points of 2 in the pair, once counted")
    # The pair's place among the counted ones, and the test's LLR once it was counted: the chart.
    counted_number = models.PositiveIntegerField(null=True, blank=True)
    llr_after = models.FloatField(null=True, blank=True)
    counted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["test", "index", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["test", "index", "attempt"], name="versiontest_pair_attempt_unique"),
            models.UniqueConstraint(
                fields=["test", "index"], condition=models.Q(state="counted"), name="versiontest_pair_counted_once"
            ),
            models.CheckConstraint(
                condition=models.Q(state__in=["playing", "counted", "failed", "discarded"]),
                name="versiontest_pair_state_valid",
            ),
        ]
        indexes = [models.Index(fields=["test", "state"], name="versiontest_pair_state_idx")]

    def __str__(self) -> str:
        return f"{self.test} pair {self.index} (attempt {self.attempt}, {self.state})"
