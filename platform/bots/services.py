"""Services of the bots app: create bots, store uploaded versions, finish their validation."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from engine.rules import Rules
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
    """Plan the version's validation: one run per configuration of ``validation.validation_configurations``
    (2 and 4 seats, and the rules of the events its bot is entered in), each a match against the reference
    opponent in every other seat with duplicate deals. Every configuration is planned; at most
    ``VALIDATION_MAX_CONFIGURATIONS`` of the matches are queued now, the rest as those pass
    (``_queue_waiting``). The plan is stored on the version. Returns the matches queued."""
    with transaction.atomic():  # the plan is stored before any of its results can arrive
        runs = [validation.new_run(configuration) for configuration in validation.validation_configurations(version.bot)]
        runs, matches = _queue_waiting(version, runs)
        version.validation_runs = runs
        BotVersion.objects.filter(pk=version.pk).update(validation_runs=version.validation_runs)
    return matches


def _queue_waiting(version: BotVersion, runs: list[dict]) -> tuple[list[dict], list]:
    """Create the matches of waiting runs, in plan order, while fewer than VALIDATION_MAX_CONFIGURATIONS
    of the version's runs are pending. Returns (the runs, the matches created). Called with the plan
    not yet stored or the version's row locked."""
    from matches.services import match_create

    room = max(1, settings.VALIDATION_MAX_CONFIGURATIONS) - sum(run["status"] == validation.PENDING for run in runs)
    queued, created = [], []
    for run in runs:
        if run["status"] == validation.WAITING and room > 0:
            rules = Rules.from_dict(run["rules"])
            match = match_create(
                kind="validation",
                rules=rules,
                seats=[version] + [settings.VALIDATION_OPPONENT] * (rules.players - 1),
                deals=1,
                duplicate=True,
            )
            run = {**run, "match": match.pk, "status": validation.PENDING}
            created.append(match)
            room -= 1
        queued.append(run)
    return queued, created


def _legacy_rules(runs_of: dict[int, list[dict]]) -> dict[int, dict]:
    """match id -> rules of the runs stored before runs carried their rules (one query, none when
    every run has its rules)."""
    from matches.models import Match

    ids = [run["match"] for runs in runs_of.values() for run in runs if not run.get("rules") and run.get("match")]
    return dict(Match.objects.filter(pk__in=ids).values_list("pk", "rules")) if ids else {}


def _validated_by_platform(version_ids: list[int]) -> set[int]:
    """Of the versions without a plan, those the platform validated (the single validation match
    of the time before plans): one query."""
    from matches.models import MatchSeat

    if not version_ids:
        return set()
    return set(
        MatchSeat.objects.filter(bot_version_id__in=version_ids, match__kind="validation")
        .values_list("bot_version_id", flat=True).distinct()
    )


def configuration_states(versions: dict[int, list[dict]], rules) -> dict[int, str]:
    """version id -> its state in the configuration ``rules`` (``versions``: id -> validation_runs):
    the status of its run for it (passed, pending, waiting, failed, skipped), or ``validation.MISSING``
    / ``validation.UNPLANNED`` when it has none. A fixed number of queries whatever the number."""
    legacy = _legacy_rules(versions)
    unplanned = [pk for pk, runs in versions.items() if not runs]
    validated = _validated_by_platform(unplanned)
    states = {}
    for pk, runs in versions.items():
        run = validation.run_for(runs or [], rules, legacy)
        if run is not None:
            states[pk] = run["status"]
        elif runs or pk in validated:
            states[pk] = validation.MISSING
        else:
            states[pk] = validation.UNPLANNED
    return states


@dataclass(frozen=True)
class Requirement:
    """What an event entry of a bot waits for: the playing version's runs of the event's configurations
    that have not passed (``held``: pending or waiting; ``failed``: failed, with their reasons)."""

    version: BotVersion | None
    held: list[dict]
    failed: list[dict]

    @property
    def message(self) -> str:
        """The entry's state for its author, or "" when it plays at once."""
        if self.failed:
            run = self.failed[0]
            return (f"{self.version.label} failed its validation at {run['label']}: {run['reason']} "
                    "(the version's page shows that game's log); upload a version that plays this configuration")
        if self.held:
            return (f"{self.version.label} is being validated at {', '.join(run['label'] for run in self.held)}; "
                    "the entry plays once that passes (the version's page shows the report)")
        return ""


def validation_require(bot: Bot, configurations: list[validation.Configuration]) -> Requirement:
    """Make sure the version playing for ``bot`` is validated in each of an event's ``configurations``
    (called by every path that enters a bot in a ladder or tournament, inside its transaction).

    Each configuration the playing version has no run for is added to its plan and queued (within
    VALIDATION_MAX_CONFIGURATIONS at once), as is a run the platform failed to play; the bot's versions
    still validating get the configurations added to their plans too, so the version that replaces the
    playing one was checked there as well. Under the bot's row lock (as an upload takes it) and each
    version's (as the validation hook takes it), so a plan never misses an entry committed meanwhile and
    a configuration is never queued twice. A version made active without the platform's validation
    (``validation.UNPLANNED``) is not held. Returns what the entry waits for."""
    from .selectors import bot_playing_version

    with transaction.atomic():
        Bot.objects.select_for_update().filter(pk=bot.pk).first()
        playing = bot_playing_version(bot)
        others = list(bot.versions.filter(status=BotVersion.Status.VALIDATING).exclude(validation_runs=[])
                      .values_list("pk", flat=True))
        held: list[dict] = []
        failed: list[dict] = []
        for pk in sorted({*others, *([playing.pk] if playing else [])}):
            version = BotVersion.objects.select_for_update().defer("source").get(pk=pk)
            runs = list(version.validation_runs or [])
            legacy = _legacy_rules({pk: runs})
            if not runs and pk not in _validated_by_platform([pk]):
                continue  # made active without the platform's validation: nothing held, nothing queued
            added = False
            for configuration in configurations:
                run = validation.run_for(runs, configuration.rules, legacy)
                if run is None or (run["status"] == validation.FAILED and run.get("platform")):
                    if run is not None:  # the platform failed to play it: played again
                        runs.remove(run)
                    runs.append({**validation.new_run(configuration),
                                 "added": version.status == BotVersion.Status.ACTIVE})
                    added = True
            if added:
                runs, _ = _queue_waiting(version, runs)
                version.validation_runs = runs
                version.save(update_fields=["validation_runs"])
            if playing is not None and pk == playing.pk:
                for configuration in configurations:
                    run = validation.run_for(runs, configuration.rules, legacy)
                    if run is not None and run["status"] == validation.FAILED:
                        failed.append(run)
                    elif run is not None and run["status"] != validation.PASSED:
                        held.append(run)
        return Requirement(playing, held, failed)


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
    """Hook for finished validation matches, under the version's row lock.

    A version being validated is rejected as soon as one configuration fails (the reason names it;
    the log is that match's; runs still waiting are skipped), the next waiting run is queued when one
    passes, and the version is active once every one passed. A run added to an active version (an
    event entered later, ``validation_require``) is recorded without touching the version's status:
    its log is added to the validation log under its label, and a failure refuses, after the commit,
    the entries that need that configuration (``validation_refuse_entries``), what was refused stored
    on the run."""
    seat = next((s for s in match.seats.all() if s.bot_version_id), None)
    if seat is None:
        return
    version = BotVersion.objects.select_for_update().get(pk=seat.bot_version_id)
    if version.status == BotVersion.Status.ACTIVE:
        _added_run_finish(version, match, seat)
        return
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
    outcome, failed = validation.verdict(runs)
    fields = ["validation_runs"]
    if outcome == validation.FAILED and failed["match"] == match.pk:
        where = f" (in the validation at {failed['label']})" if failed["label"] else ""
        version.status = BotVersion.Status.REJECTED
        version.rejection_reason = f"{failure}{where}"
        version.validation_log = (f"[validation at {failed['label']}]\n" if failed["label"] else "") + seat.log
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
        runs = validation.skip_waiting(runs, f"not played: the version failed at {failed['label'] or 'validation'}")
        _cancel_pending_validations(runs)
    elif outcome == validation.PASSED:
        version.status = BotVersion.Status.ACTIVE
        version.rejection_reason = ""
        version.validation_log = _passed_log(version, runs, match, seat)
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
    elif outcome == validation.PENDING:
        runs, _ = _queue_waiting(version, runs)
    version.validation_runs = runs
    version.save(update_fields=fields)


def _added_run_finish(version: BotVersion, match, seat) -> None:
    """A run added to the active ``version`` ended (its row locked): record it, append its log, queue
    the next waiting one, and on a failure refuse the entries that need the configuration.

    A match the platform could not play fails the run marked ``platform``: the entry is refused with
    the platform's reason (a ladder entry may come back with the same version: ``validation_require``
    plays such a run again on entry)."""
    runs = version.validation_runs or []
    run = next((run for run in runs if run["match"] == match.pk), None)
    if run is None or run["status"] != validation.PENDING:
        return  # a match of an earlier plan, or one already recorded
    failure = _validation_failure(match, seat)
    platform = match.status != match.Status.DONE
    runs = validation.record_run(
        runs, match.pk, validation.FAILED if failure else validation.PASSED, failure or "",
        **({"platform": True} if platform else {}),
    )
    run = next(run for run in runs if run["match"] == match.pk)
    mark = " (failed)" if failure else ""
    version.validation_log = (
        f"{version.validation_log.rstrip()}\n[validation at {run['label']}{mark}]\n{seat.log}".lstrip("\n")
    )
    runs, _ = _queue_waiting(version, runs)
    version.validation_runs = runs
    version.save(update_fields=["validation_runs", "validation_log"])
    if failure:
        # After the commit, in a transaction of its own: the refusals lock the events' rows before the
        # version's, as the entry paths do (event, bot, version), so the two never wait on each other.
        version_id, match_id = version.pk, match.pk
        transaction.on_commit(lambda: validation_refuse_entries(version_id, match_id))


def validation_refuse_entries(version_id: int, match_id: int) -> list[str]:
    """Refuse the entries that need the configuration the version's run of ``match_id`` failed
    (``validation.refuse_entries``: the apps' handlers, which lock their rows first), and store what was
    refused on the run (``refused``, shown in the version's report). Runs once the failure is committed."""
    import logging

    try:
        with transaction.atomic():
            version = BotVersion.objects.defer("source").select_related("bot").get(pk=version_id)
            run = next((r for r in version.validation_runs or [] if r["match"] == match_id), None)
            if run is None or run["status"] != validation.FAILED:
                return []
            refused = validation.refuse_entries(version, run)
            version = BotVersion.objects.select_for_update().defer("source").get(pk=version_id)
            version.validation_runs = [
                {**r, "refused": refused} if r["match"] == match_id else r for r in version.validation_runs
            ]
            version.save(update_fields=["validation_runs"])
            return refused
    except Exception:  # noqa: BLE001 - the failure is stored; the entries stay held, never played
        logging.getLogger(__name__).exception("version %s: entries not refused after validation match %s",
                                              version_id, match_id)
        return []


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
    "configuration_states",
    "validation_refuse_entries",
    "validation_require",
    "private_read",
]
