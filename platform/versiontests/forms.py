"""The start form of a version test: NEW among your versions, OLD, the ladder, the test's options.

The fields take ids and a slug; what they may be (yours, public, active, two seats) is the
service's to say, so its clear messages reach the form's fields.
"""

from __future__ import annotations

from django import forms

from . import selectors, services

DEFAULTS = services.DEFAULTS


class VersionTestForm(forms.Form):
    new_version = forms.IntegerField(label="NEW (your version)", widget=forms.Select)
    old_version = forms.IntegerField(label="OLD (tested against)", widget=forms.Select)
    ladder = forms.CharField(label="Rules and clocks of", widget=forms.Select)
    elo0 = forms.FloatField(
        label="elo0", initial=DEFAULTS["elo0"], min_value=-services.ELO_LIMIT, max_value=services.ELO_LIMIT,
        help_text="H0: NEW is better by this much at most",
    )
    elo1 = forms.FloatField(
        label="elo1", initial=DEFAULTS["elo1"], min_value=-services.ELO_LIMIT, max_value=services.ELO_LIMIT,
        help_text="H1: NEW is better by this much",
    )
    alpha = forms.FloatField(label="alpha", initial=DEFAULTS["alpha"], help_text="false H1 rate, 0 to 0.5")
    beta = forms.FloatField(label="beta", initial=DEFAULTS["beta"], help_text="false H0 rate, 0 to 0.5")
    max_pairs = forms.IntegerField(
        label="max pairs", initial=services.DEFAULT_MAX_PAIRS, min_value=1, max_value=services.MAX_PAIRS_LIMIT,
        help_text=f"inconclusive after this many pairs (2 games each), at most {services.MAX_PAIRS_LIMIT}",
    )
    seed = forms.IntegerField(
        label="seed", required=False, min_value=0, max_value=services.SEED_LIMIT - 1,
        help_text="pair i plays the deal of seed + i; empty: a random seed",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        mine = selectors.new_version_choices(user)
        theirs = selectors.public_old_versions(user)
        self.fields["new_version"].widget.choices = [(v.pk, v.label) for v in mine]
        self.fields["old_version"].widget.choices = [
            ("Your versions", [(v.pk, v.label) for v in mine]),
            ("Public bots (the version each plays)", [(v.pk, v.label) for v in theirs]),
        ]
        from ladders.selectors import challenge_ladders

        self.fields["ladder"].widget.choices = [
            (ladder.slug, f"{ladder.name} ({ladder.seats} seats)") for ladder in challenge_ladders()
        ]
        self.has_versions = bool(mine)
