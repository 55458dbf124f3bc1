"""The rule options of ``engine.rules`` as form fields, for every organizer's form (the ladder and the
tournament admin): moved from tournaments_app.forms (issue 15 point 1) so the ladder admin no longer
imports the tournament app.

The rule fields are generated from ``engine.rules`` (``Rules`` fields and defaults, ``CHOICES``,
``BOUNDS``, ``BOOLEANS``): a new option there is a new field here with nothing to copy. The tournament
admin and the ladder admin both use ``RuleFieldsMixin``.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from django import forms

from engine.rules import BOOLEANS, BOUNDS, CHOICES, DEFAULT_TARGET, Rules, RulesError

#: the form field of rule option ``x`` is ``PREFIX + x``
PREFIX = "rule_"
#: options whose default is "none" (an empty field): target (the scoring's default) and rounds (play to target)
OPTIONAL = {
    "target": "empty: the scoring's default ({})".format(", ".join(f"{k} {v}" for k, v in DEFAULT_TARGET.items())),
    "rounds": "empty: play to the target",
}


def _defaults() -> dict:
    return {f.name: f.default for f in dataclasses.fields(Rules)}


def rule_field(option: str, default) -> forms.Field:
    """The form field of one rule option: its allowed values, its default as the initial value."""
    label = option.replace("_", " ")
    if option in CHOICES:
        return forms.ChoiceField(
            label=label, choices=[(c, c) for c in CHOICES[option]], initial=default,
            help_text=f"default {default}",
        )
    if option in BOOLEANS:
        return forms.BooleanField(label=label, required=False, initial=default,
                                  help_text=f"default {'on' if default else 'off'}")
    low, high = BOUNDS[option]
    if option in OPTIONAL:
        return forms.IntegerField(label=label, required=False, min_value=low, max_value=high, initial=default,
                                  help_text=f"{low} to {high}; {OPTIONAL[option]}")
    return forms.IntegerField(label=label, min_value=low, max_value=high, initial=default,
                              help_text=f"{low} to {high}; default {default}")


def rule_fields(exclude: tuple[str, ...] = ()) -> dict[str, forms.Field]:
    """Every option of engine.rules (but ``exclude``) as ``{PREFIX + option: field}``, in RULES.md order."""
    return {PREFIX + name: rule_field(name, default) for name, default in _defaults().items() if name not in exclude}


def rules_initial(rules: dict | None, exclude: tuple[str, ...] = ()) -> dict:
    """Initial values of the rule fields for a stored rule set (missing options at their defaults)."""
    values = {**_defaults(), **(rules or {})}
    if values.get("target") == DEFAULT_TARGET.get(values.get("scoring") or ""):
        values["target"] = None  # stored complete: the scoring's default shows as "empty" (the same rules)
    return {PREFIX + name: value for name, value in values.items() if name not in exclude}


def rules_post_data(rules: dict | None = None, exclude: tuple[str, ...] = ()) -> dict:
    """The POST data of the rule fields for ``rules`` (other options at their defaults), as a browser sends it:
    for scripts and tests that drive the admin."""
    data = {}
    for key, value in rules_initial(rules, exclude).items():
        if isinstance(value, bool):
            if value:
                data[key] = "on"
        else:
            data[key] = "" if value is None else str(value)
    return data


def rule_fields_form(exclude: tuple[str, ...] = ()) -> type[forms.Form]:
    """A form class declaring the rule fields (a ModelForm inherits them, so an admin can list them)."""
    return type("RuleFields", (RuleFieldsMixin, forms.Form), {**rule_fields(exclude), "rule_exclude": exclude})


if TYPE_CHECKING:
    from django.forms import Form as _FormBase
else:
    _FormBase = object  # a mixin at run time: the form class it is mixed into is the form


class RuleFieldsMixin(_FormBase):
    """``clean_rules_fields`` builds the rule set (a dict of every option) from the rule fields and puts an
    engine refusal on the field of the option at fault."""

    rule_exclude: tuple[str, ...] = ()

    def set_rules_initial(self, rules: dict | None) -> None:
        if not self.is_bound:
            self.initial.update(rules_initial(rules, self.rule_exclude))

    def clean_rules_fields(self, extra: dict | None = None) -> dict | None:
        """The rule set from the fields (``extra`` supplies excluded options), or None after adding an error."""
        data = self.cleaned_data
        names = [name for name in _defaults() if name not in self.rule_exclude]
        if any(PREFIX + name in self.errors for name in names):
            return None
        rules = {name: data.get(PREFIX + name) for name in names}
        for name in OPTIONAL:
            if name in rules and rules[name] is None:
                del rules[name]  # the engine's "none": its own default
        rules.update(extra or {})
        try:
            return Rules.from_dict(rules).to_dict()
        except RulesError as exc:
            key = PREFIX + exc.option
            self.add_error(key if key in self.fields else None, str(exc))
        except (TypeError, ValueError) as exc:
            self.add_error(None, f"invalid rules: {exc}")
        return None
