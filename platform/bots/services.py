"""Services of the bots app: create bots, store uploaded versions, finish their validation."""

from __future__ import annotations

import re

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from sandbox.package import BotPackage, PackageError

from . import validation
from .models import Bot, BotVersion, SourceAccess
from .selectors import OWNER, private_read_reason


class BotError(ValueError):
    """A request about a bot or a version is refused; the message is shown to the user."""


def bot_create(*, owner, name: str, description: str = "", source_public: bool = False) -> Bot:
    """Create a bot; its name must be unique among the owner's bots."""
    name = name.strip()
    if not name:
        raise BotError("a bot needs a name")
    if "/" in name or not name.isprintable():
        raise BotError(
            f"{name!r}: a bot name may not contain '/' (it separates owner and bot, as in ada/mybot) "
            "or control characters"
        )
    # case-insensitively: "MyBot" beside "mybot" would be two bots no one can tell apart
    same = Bot.objects.filter(owner=owner, name__iexact=name).values_list("name", flat=True).first()
    if same is not None:
        raise BotError(f"you already have a bot named {same!r}")
    try:
        with transaction.atomic():
            return Bot.objects.create(
                owner=owner, name=name, description=description, source_public=source_public
            )
    except IntegrityError:  # a concurrent request created the same name
        raise BotError(f"you already have a bot named {name!r}") from None


def bot_update(bot: Bot, *, description: str, source_public: bool) -> Bot:
    bot.description = description
    bot.source_public = source_public
    bot.save(update_fields=["description", "source_public"])
    return bot


def bot_version_create(*, bot: Bot, filename: str, data: bytes, validate: bool = True) -> BotVersion:
    """Check an upload (every rule of the bot contract), store it as the bot's next version,
    and queue its validation match.

    Raises ``PackageError`` for a broken upload and ``BotError`` for bytes this bot already has.
    """
    package = BotPackage.from_bytes(filename, data, settings.BOT_UPLOAD_LIMITS)
    try:
        with transaction.atomic():
            # Lock the bot so concurrent uploads get distinct version numbers.
            Bot.objects.select_for_update().filter(pk=bot.pk).first()
            _refuse_duplicate(bot, package.sha256)
            number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
            version = BotVersion.objects.create(
                bot=bot,
                number=number,
                filename=_safe_filename(package.filename),
                source=package.data,
                sha256=package.sha256,
                size=len(package.data),
            )
            if validate:
                bot_version_validate(version)
    except IntegrityError:
        _refuse_duplicate(bot, package.sha256)
        raise
    return version


def _safe_filename(name: str) -> str:
    """The upload's name for display: control characters (NUL breaks PostgreSQL) become '_'."""
    return re.sub(r"[\x00-\x1f\x7f]", "_", name)[-255:] or "upload"


def _refuse_duplicate(bot: Bot, sha256: str) -> None:
    existing = bot.versions.filter(sha256=sha256).first()
    if existing is not None:
        raise BotError(
            f"these exact bytes were already uploaded as version {existing.number} "
            f"(sha256 {sha256[:12]}…); change the bot before uploading again"
        )


def bot_version_validate(version: BotVersion) -> list:
    """Queue the version's validation: one match per configuration of ``validation.validation_configurations``
    (2 and 4 seats, and the rules of the events its bot is entered in), each against the reference
    opponent in every other seat with duplicate deals; the plan is stored on the version. Returns the matches."""
    from matches.services import match_create

    with transaction.atomic():  # the plan is stored before any of its results can arrive
        matches = [
            (
                configuration,
                match_create(
                    kind="validation",
                    rules=configuration.rules,
                    seats=[version] + [settings.VALIDATION_OPPONENT] * (configuration.rules.players - 1),
                    games=1,
                    duplicate=True,
                ),
            )
            for configuration in validation.validation_configurations(version.bot)
        ]
        version.validation_runs = [
            {"label": configuration.label, "match": match.pk, "status": validation.PENDING, "reason": ""}
            for configuration, match in matches
        ]
        BotVersion.objects.filter(pk=version.pk).update(validation_runs=version.validation_runs)
    return [match for _, match in matches]


def bot_version_revalidate(version: BotVersion):
    """Validate again a version whose validation match the platform failed to play.

    A version rejected for its own fault stays rejected: the same bytes would fault again.
    """
    from .selectors import can_revalidate

    with transaction.atomic():
        version = BotVersion.objects.select_for_update().get(pk=version.pk)
        if not can_revalidate(version):
            raise BotError(
                f"{version.label} is {version.status}; only a version whose validation match "
                "the platform failed to play can be validated again"
            )
        version.status = BotVersion.Status.VALIDATING
        version.rejection_reason = ""
        version.validated_at = None
        version.save(update_fields=["status", "rejection_reason", "validated_at"])
        bot_version_validate(version)
    return version


def _validation_failure(match, seat) -> str | None:
    """Why ``seat`` (the new version's) failed its validation ``match``, or None when it passed."""
    if match.status != match.Status.DONE:
        return f"the validation match could not be played: {match.error or match.status}"
    if seat.fault_kind:
        reason = seat.fault_reason or seat.fault_kind
        # "exception in agent: ..." names its kind already; "3 strikes ..." does not.
        return reason if reason.startswith(seat.fault_kind) else f"{seat.fault_kind}: {reason}"
    return None


def bot_version_validation_finish(match) -> None:
    """Hook for finished validation matches: the version is rejected as soon as one configuration
    fails (the reason names it; the log is that match's), and active once every one passed."""
    seat = next((s for s in match.seats.all() if s.bot_version_id), None)
    if seat is None:
        return
    version = BotVersion.objects.select_for_update().get(pk=seat.bot_version_id)
    if version.status != BotVersion.Status.VALIDATING:
        return
    failure = _validation_failure(match, seat)
    runs = version.validation_runs or []
    run = next((run for run in runs if run["match"] == match.pk), None)
    if run is None and runs:
        return  # a match of an earlier validation of this version (revalidated since)
    if run is None:  # a version validated before validation_runs existed: its one match decides
        runs = [{"label": "", "match": match.pk, "status": validation.PENDING, "reason": ""}]
    runs = validation.record_run(runs, match.pk, validation.FAILED if failure else validation.PASSED, failure or "")
    version.validation_runs = runs
    outcome, failed = validation.verdict(runs)
    fields = ["validation_runs"]
    if outcome == validation.FAILED and failed["match"] == match.pk:
        where = f" (in the validation at {failed['label']})" if failed["label"] else ""
        version.status = BotVersion.Status.REJECTED
        version.rejection_reason = f"{failure}{where}"
        version.validation_log = (f"[validation at {failed['label']}]\n" if failed["label"] else "") + seat.log
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
        _cancel_pending_validations(runs)
    elif outcome == validation.PASSED:
        version.status = BotVersion.Status.ACTIVE
        version.rejection_reason = ""
        version.validation_log = _passed_log(version, runs, match, seat)
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
    version.save(update_fields=fields)


def _cancel_pending_validations(runs: list[dict]) -> None:
    """The version is rejected: its configurations not yet started are not played."""
    from matches.models import Match
    from matches.services import match_cancel

    pending = [run["match"] for run in runs if run["status"] == validation.PENDING]
    for match in Match.objects.filter(pk__in=pending, status=Match.Status.QUEUED):
        match_cancel(match)


def _passed_log(version: BotVersion, runs: list[dict], match, seat) -> str:
    """The logs of the version's seat in every configuration, each under its label."""
    from matches.models import MatchSeat

    if len(runs) == 1 and not runs[0]["label"]:
        return seat.log
    logs = dict(
        MatchSeat.objects.filter(match_id__in=[run["match"] for run in runs], bot_version=version)
        .exclude(match_id=match.pk)
        .values_list("match_id", "log")
    )
    logs[match.pk] = seat.log
    return "\n".join(f"[validation at {run['label']}]\n{logs.get(run['match'], '')}" for run in runs)


def bot_pin_version(bot: Bot, version: BotVersion | None) -> Bot:
    """Choose the version that plays for the bot; None means the newest active one."""
    if version is not None:
        if version.bot_id != bot.pk:
            raise BotError(f"{version.label} is not a version of {bot}")
        if version.status != BotVersion.Status.ACTIVE:
            raise BotError(f"{version.label} is {version.status}; only an active version can play")
    bot.pinned_version = version
    bot.save(update_fields=["pinned_version"])
    return bot


def private_read(
    *, user, version: BotVersion, what: str, path: str, match_kind: str | None = None, match_id: int | None = None
) -> bool:
    """May ``user`` read ``version``'s private ``what`` (``SourceAccess.What``; for a seat log, in a match
    of ``match_kind``)? ``selectors.private_read_reason`` decides; a read by anyone but the owner is
    written to the audit log (``SourceAccess``) with the reason and ``path`` before it is shown."""
    reason = private_read_reason(user, version.bot, match_kind=match_kind)
    if reason is None:
        return False
    if reason != OWNER:
        SourceAccess.objects.create(
            user=user,
            username=user.get_username(),
            bot_version=version,
            label=version.label[:255],
            what=what,
            match_id=match_id,
            reason=reason[:200],
            path=path[:500],
        )
    return True


__all__ = [
    "BotError",
    "PackageError",
    "bot_create",
    "bot_pin_version",
    "bot_update",
    "bot_version_create",
    "bot_version_revalidate",
    "bot_version_validate",
    "bot_version_validation_finish",
    "private_read",
]
