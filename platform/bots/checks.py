"""System checks of the bots app: the validation match must be playable as configured."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register


@register()
def validation_settings_check(app_configs=None, **kwargs):
    from engine import bots
    from engine.rules import Rules, RulesError

    errors = []
    if settings.VALIDATION_OPPONENT not in bots.REFERENCE_BOTS:
        errors.append(
            Error(
                f"VALIDATION_OPPONENT={settings.VALIDATION_OPPONENT!r} is not a reference bot "
                f"(known: {', '.join(bots.REFERENCE_BOTS)})",
                id="bots.E001",
            )
        )
    try:
        rules = Rules.parse(settings.VALIDATION_RULES)
    except RulesError as exc:
        errors.append(Error(f"VALIDATION_RULES={settings.VALIDATION_RULES!r}: {exc}", id="bots.E002"))
    else:
        if rules.players != 2:
            errors.append(
                Error(
                    f"VALIDATION_RULES must be for 2 players (the new version and the opponent), "
                    f"got players={rules.players}",
                    id="bots.E003",
                )
            )
        for players in settings.VALIDATION_SEATS:
            try:
                Rules.from_dict({**rules.to_dict(), "players": players})
            except RulesError as exc:
                errors.append(Error(f"VALIDATION_SEATS={settings.VALIDATION_SEATS!r}: {exc}", id="bots.E004"))
    return errors
