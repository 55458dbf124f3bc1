"""Organizer forms of the tournament admin: tie-breaks as an ordered choice, bulk entries and the
confirmations with a reason (the rule fields are core.rule_forms')."""

from __future__ import annotations

from django import forms

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
