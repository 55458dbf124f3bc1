"""Forms of the ladders app."""

from __future__ import annotations

from django import forms


class EnterForm(forms.Form):
    """Which ladder a bot enters (the bot comes from the URL)."""

    ladder = forms.SlugField(max_length=100)
