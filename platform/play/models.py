"""Human games: the one row the play app owns beside the match it plays."""

from __future__ import annotations

from django.db import models

from matches import human


class HumanGame(models.Model):
    """A person's game against bots: its match (kind ``human``, the person's seat has ``player``),
    the ladder whose rules it borrowed, and the person's clock."""

    match = models.OneToOneField("matches.Match", on_delete=models.CASCADE, related_name="human_game", primary_key=True)
    ladder = models.ForeignKey("ladders.Ladder", null=True, on_delete=models.SET_NULL, related_name="human_games")
    clock = models.FloatField(
        default=human.CLOCK_DEFAULT,
        help_text=f"the person's seconds per decision ({human.CLOCK_MIN}-{human.CLOCK_MAX})",
    )
    #: the client address it was started from (core.clientip): the cap on games at once counts it
    #: as well as the account; "" when the server gave none
    address = models.CharField(max_length=45, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["address", "created_at"], name="play_game_address")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(clock__gte=human.CLOCK_MIN, clock__lte=human.CLOCK_MAX), name="play_clock_range"
            ),
        ]

    def __str__(self) -> str:
        return f"human game: match {self.match_id}"
