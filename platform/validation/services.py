"""Services of the validation app: a version's validation plan, its matches and their results.

Moved from bots.services (issue 15 point 1): validation plays matches, so it sits above the bots
and matches apps; bots hands a new version over through ``settings.BOT_VERSION_VALIDATION``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bots.models import Bot, BotVersion
from bots.selectors import bot_playing_version
from bots.services import BotError
from engine.rules import Rules
from matches.models import Match, MatchSeat
from matches.services import match_cancel, match_create

from . import configurations as plan
from .selectors import can_revalidate


def bot_version_validate(version: BotVersion) -> list:
    """Plan the version's validation: one run per configuration of ``plan.validation_configurations``
    (2 and 4 seats, and the rules of the events its bot is entered in), each a match against the reference
    opponent in every other seat with duplicate deals. Every configuration is planned; at most
    ``VALIDATION_MAX_CONFIGURATIONS`` of the matches are queued now, the rest as those pass
    (``_queue_waiting``). The plan is stored on the version. Returns the matches queued."""
    with transaction.atomic():  # the plan is stored before any of its results can arrive
        runs = [plan.new_run(configuration) for configuration in plan.validation_configurations(version.bot)]
        runs, matches = _queue_waiting(version, runs)
        version.validation_runs = runs
        BotVersion.objects.filter(pk=version.pk).update(validation_runs=version.validation_runs)
    return matches


def _queue_waiting(version: BotVersion, runs: list[dict]) -> tuple[list[dict], list]:
    """Create the matches of waiting runs, in plan order, while fewer than VALIDATION_MAX_CONFIGURATIONS
    of the version's runs are pending. Returns (the runs, the matches created). Called with the plan
    not yet stored or the version's row locked."""
    room = max(1, settings.VALIDATION_MAX_CONFIGURATIONS) - sum(run["status"] == plan.PENDING for run in runs)
    queued, created = [], []
    for run in runs:
        if run["status"] == plan.WAITING and room > 0:
            rules = Rules.from_dict(run["rules"])
            match = match_create(
                kind="validation",
                rules=rules,
                seats=[version] + [settings.VALIDATION_OPPONENT] * (rules.players - 1),
                deals=1,
                duplicate=True,
            )
            run = {**run, "match": match.pk, "status": plan.PENDING}
            created.append(match)
            room -= 1
        queued.append(run)
    return queued, created


def _legacy_rules(runs_of: dict[int, list[dict]]) -> dict[int, dict]:
    """match id -> rules of the runs stored before runs carried their rules (one query, none when
    every run has its rules)."""
    ids = [run["match"] for runs in runs_of.values() for run in runs if not run.get("rules") and run.get("match")]
    return dict(Match.objects.filter(pk__in=ids).values_list("pk", "rules")) if ids else {}


def _validated_by_platform(version_ids: list[int]) -> set[int]:
    """Of the versions without a plan, those the platform validated (the single validation match
    of the time before plans): one query."""
    if not version_ids:
        return set()
    return set(
        # order_by(): without it the match's default order joins the DISTINCT (one row per seat)
        MatchSeat.objects.filter(bot_version_id__in=version_ids, match__kind="validation")
        .order_by().values_list("bot_version_id", flat=True).distinct()
    )


def configuration_states(versions: dict[int, list[dict]], rules) -> dict[int, str]:
    """version id -> its state in the configuration ``rules`` (``versions``: id -> validation_runs):
    the status of its run for it (passed, pending, waiting, failed, skipped), or ``plan.MISSING``
    / ``plan.UNPLANNED`` when it has none. A fixed number of queries whatever the number."""
    legacy = _legacy_rules(versions)
    unplanned = [pk for pk, runs in versions.items() if not runs]
    validated = _validated_by_platform(unplanned)
    states = {}
    for pk, runs in versions.items():
        run = plan.run_for(runs or [], rules, legacy)
        if run is not None:
            states[pk] = run["status"]
        elif runs or pk in validated:
            states[pk] = plan.MISSING
        else:
            states[pk] = plan.UNPLANNED
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
        if self.version is None:  # no playing version: nothing is held
            return ""
        if self.failed:
            run = self.failed[0]
            return (f"{self.version.label} failed its validation at {run['label']}: {run['reason']} "
                    "(the version's page shows that game's log); upload a version that plays this configuration")
        if self.held:
            return (f"{self.version.label} is being validated at {', '.join(run['label'] for run in self.held)}; "
                    "the entry plays once that passes (the version's page shows the report)")
        return ""


def validation_require(bot: Bot, configurations: list[plan.Configuration]) -> Requirement:
    """Make sure the version playing for ``bot`` is validated in each of an event's ``configurations``
    (called by every path that enters a bot in a ladder or tournament, inside its transaction).

    Each configuration the playing version has no run for is added to its plan and queued (within
    VALIDATION_MAX_CONFIGURATIONS at once), as is a run the platform failed to play; the bot's versions
    still validating get the configurations added to their plans too, so the version that replaces the
    playing one was checked there as well. Under the bot's row lock (as an upload takes it) and each
    version's (as the validation hook takes it), so a plan never misses an entry committed meanwhile and
    a configuration is never queued twice. A version made active without the platform's validation
    (``plan.UNPLANNED``) is not held. Returns what the entry waits for."""
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
                run = plan.run_for(runs, configuration.rules, legacy)
                if run is None or (run["status"] == plan.FAILED and run.get("platform")):
                    if run is not None:  # the platform failed to play it: played again
                        runs.remove(run)
                    runs.append({**plan.new_run(configuration),
                                 "added": version.status == BotVersion.Status.ACTIVE})
                    added = True
            if added:
                runs, _ = _queue_waiting(version, runs)
                version.validation_runs = runs
                version.save(update_fields=["validation_runs"])
            if playing is not None and pk == playing.pk:
                for configuration in configurations:
                    run = plan.run_for(runs, configuration.rules, legacy)
                    if run is not None and run["status"] == plan.FAILED:
                        failed.append(run)
                    elif run is not None and run["status"] != plan.PASSED:
                        held.append(run)
        return Requirement(playing, held, failed)


def bot_version_revalidate(version: BotVersion):
    """Validate again a version whose validation match the platform failed to play.

    A version rejected for its own fault stays rejected: the same bytes would fault again.
    """
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
        runs = [{"label": "", "match": match.pk, "status": plan.PENDING, "reason": ""}]
    runs = plan.record_run(runs, match.pk, plan.FAILED if failure else plan.PASSED, failure or "")
    outcome, failed = plan.verdict(runs)
    fields = ["validation_runs"]
    if outcome == plan.FAILED and failed is not None and failed["match"] == match.pk:
        where = f" (in the validation at {failed['label']})" if failed["label"] else ""
        version.status = BotVersion.Status.REJECTED
        version.rejection_reason = f"{failure}{where}"
        version.validation_log = (f"[validation at {failed['label']}]\n" if failed["label"] else "") + seat.log
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
        runs = plan.skip_waiting(runs, f"not played: the version failed at {failed['label'] or 'validation'}")
        _cancel_pending_validations(runs)
    elif outcome == plan.PASSED:
        version.status = BotVersion.Status.ACTIVE
        version.rejection_reason = ""
        version.validation_log = _passed_log(version, runs, match, seat)
        version.validated_at = timezone.now()
        fields += ["status", "rejection_reason", "validation_log", "validated_at"]
    elif outcome == plan.PENDING:
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
    if run is None or run["status"] != plan.PENDING:
        return  # a match of an earlier plan, or one already recorded
    failure = _validation_failure(match, seat)
    platform = match.status != match.Status.DONE
    runs = plan.record_run(
        runs, match.pk, plan.FAILED if failure else plan.PASSED, failure or "",
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
    (``plan.refuse_entries``: the apps' handlers, which lock their rows first), and store what was
    refused on the run (``refused``, shown in the version's report). Runs once the failure is committed."""
    import logging

    try:
        with transaction.atomic():
            version = BotVersion.objects.defer("source").select_related("bot").get(pk=version_id)
            run = next((r for r in version.validation_runs or [] if r["match"] == match_id), None)
            if run is None or run["status"] != plan.FAILED:
                return []
            refused = plan.refuse_entries(version, run)
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
    pending = [run["match"] for run in runs if run["status"] == plan.PENDING]
    for match in Match.objects.filter(pk__in=pending, status=Match.Status.QUEUED):
        match_cancel(match)


def _passed_log(version: BotVersion, runs: list[dict], match, seat) -> str:
    """The logs of the version's seat in every configuration, each under its label."""
    if len(runs) == 1 and not runs[0]["label"]:
        return seat.log
    logs = dict(
        MatchSeat.objects.filter(match_id__in=[run["match"] for run in runs], bot_version=version)
        .exclude(match_id=match.pk)
        .values_list("match_id", "log")
    )
    logs[match.pk] = seat.log
    return "\n".join(f"[validation at {run['label']}]\n{logs.get(run['match'], '')}" for run in runs)
