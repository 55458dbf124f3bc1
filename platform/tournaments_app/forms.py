"""Organizer forms: the rule options of ``engine.rules`` as form fields, tie-breaks as an ordered choice,
bulk entries and the confirmations with a reason.

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


# --- tie-breaks: an ordered choice ---------------------------------------------------------------


class OrderedChoiceWidget(forms.Widget):
    """One select per place, all with the field's name: the browser posts them in order (``getlist``)."""

    template_name = "tournaments/widgets/ordered_choice.html"

    def __init__(self, choices=(), places: int = 0, attrs=None):
        super().__init__(attrs)
        self.choices = list(choices)
        self.places = places or len(self.choices)

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        chosen = list(value or [])
        context["widget"]["places"] = [
            {"number": i + 1, "value": chosen[i] if i < len(chosen) else "",
             "id": f"{context['widget']['attrs'].get('id', 'id_' + name)}_{i}"}
            for i in range(self.places)
        ]
        context["widget"]["choices"] = self.choices
        return context

    def value_from_datadict(self, data, files, name):
        getter = getattr(data, "getlist", None)
        values = getter(name) if getter else data.get(name, [])
        if isinstance(values, str):
            values = [values]
        return [v for v in values if v]

    def value_omitted_from_data(self, data, files, name):
        return False  # no place chosen is a value: no tie-breaks

    def id_for_label(self, id_):
        return f"{id_}_0" if id_ else id_


class OrderedChoiceField(forms.Field):
    """A list of distinct names from ``choices``, in the order chosen."""

    def __init__(self, choices, **kwargs):
        self.choices = [(c, t) for c, t in choices]
        kwargs.setdefault("widget", OrderedChoiceWidget(self.choices))
        kwargs.setdefault("required", False)
        super().__init__(**kwargs)

    def to_python(self, value):
        if value in (None, ""):
            return []
        return list(value) if isinstance(value, list | tuple) else [value]

    def validate(self, value):
        super().validate(value)
        allowed = [c for c, _ in self.choices]
        unknown = [v for v in value if v not in allowed]
        if unknown:
            raise forms.ValidationError(
                f"unknown tie-break {', '.join(map(repr, unknown))} (allowed: {', '.join(allowed)})", code="invalid")
        repeated = sorted({v for v in value if value.count(v) > 1})
        if repeated:
            raise forms.ValidationError(f"{', '.join(repeated)} chosen twice: choose each tie-break once",
                                        code="invalid")


# --- the organizer's other forms ---------------------------------------------------------------


class BulkEntriesForm(forms.Form):
    """Enter many bots at once: every active bot of a ladder and/or a pasted list of owner/bot names."""

    ladder = forms.ModelChoiceField(queryset=None, required=False, empty_label="(none)",
                                    help_text="Every bot with an active entry on this ladder.")
    names = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 6, "cols": 50}),
        help_text="One owner/bot per line (commas also separate). Unknown names are listed and nothing is added.",
    )

    def __init__(self, *args, **kwargs):
        from ladders.models import Ladder

        super().__init__(*args, **kwargs)
        self.fields["ladder"].queryset = Ladder.objects.order_by("name")

    def clean(self):
        data = super().clean()
        if not self.errors and not data.get("ladder") and not (data.get("names") or "").strip():
            raise forms.ValidationError("choose a ladder or paste at least one owner/bot name")
        return data


class ConfirmForm(forms.Form):
    """An irreversible organizer action: a reason (public, in the tournament's log) and a tick to confirm."""

    reason = forms.CharField(max_length=500, widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
                             help_text="Shown to everyone in the tournament's public log.")
    confirm = forms.BooleanField(label="I understand this cannot be undone")

    def clean_reason(self):
        reason = self.cleaned_data["reason"].strip()
        if not reason:
            raise forms.ValidationError("give a reason: it is shown in the public log")
        return reason
