"""A database at the size of a real competition, for ``manage.py seed_scale`` and the scale tests.

What it writes is shaped exactly as the platform writes it:

- users (unusable passwords, usernames ``SEED_PREFIX...``: what marks them as seeded), bots and
  their versions (the reference bots' real uploads, ``web.demo.reference_bot_upload``, active);
- ladders (validated like the admin does) and their entries;
- ladder matches: the first few of each ladder (``TEMPLATES_PER_LADDER``) go the whole way
  through the platform's own services (``matches.services.match_create``, ``match_start``,
  ``match_record_result`` with a match played for real by ``sandbox.runner`` in-process and
  stored as the runner returned it, and the ladder's result hook); every other
  match is a bulk copy of one of those stored rows (its replay, decision times, timings and seat
  results, the seed that made them) seated with other bots that upload the same code, so its
  replay is true for it; its rating changes' history points are computed with
  ``ladders.ratings.rate_match`` in match order, and the entries' stored ratings, intervals and
  likelihoods of superiority are then the ladder's batch fit (``ladders.services.ladder_refit``),
  as the worker's refit writes them, so ``recompute_ratings --check`` finds them true;
- finished round-robin and Swiss tournaments, every match played for real in-process and stored
  through ``match_start``/``match_record_result``, the tournament hook pairing each next round.

Validation matches are not written (a version's validation match is a 1-deal game against a
reference bot, one per version): the versions are stored already active.
"""

from __future__ import annotations

import random
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.db.models import F, Max
from django.utils import timezone

#: every user seed_scale creates has a username starting with this and an unusable password
SEED_PREFIX = "scale-"
#: the reference bots seeded bots upload (``random`` draws so often its replays are 20x longer)
SEED_MODULES = ("first", "greedy", "expert")
#: matches of each ladder played for real through the services; the others copy them
TEMPLATES_PER_LADDER = 12
#: rows per bulk insert
BATCH = 2000
#: seats of the seeded ladders, in turn
LADDER_SEATS = (2, 4)
#: entries of the seeded round robins and Swiss tournaments, in turn (at most one bot per owner);
#: every table of a Swiss round plays the round's deals, so its results repeat and cost little
ROUND_ROBIN_SIZES = (6, 8)
SWISS_SIZES = (16, 32, 16, 64)


class ScaleError(Exception):
    """seed_scale cannot run here (real users present, bad sizes)."""


def real_users():
    """Users seed_scale did not create: any user whose username lacks SEED_PREFIX or whose
    password is usable (sign-up always sets one)."""
    from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX

    User = get_user_model()
    return User.objects.exclude(username__startswith=SEED_PREFIX, password__startswith=UNUSABLE_PASSWORD_PREFIX)


@dataclass
class Template:
    """A stored ladder match to copy: its match fields and its seats' fields, in seat order."""

    modules: tuple[str, ...]
    match_fields: dict
    seat_fields: list[dict]


@dataclass
class Seeded:
    counts: dict = field(default_factory=lambda: defaultdict(int))
    seconds: dict = field(default_factory=dict)


def seed_scale(
    *, bots: int = 1000, matches: int = 200_000, ladders: int = 5, tournaments: int = 20,
    seed: int = 19, progress: Callable[[str, int, int], None] | None = None, force: bool = False,
) -> Seeded:
    """Fill the database; ``progress(stage, done, total)`` is called as it goes. Returns counts and
    seconds per stage. Refuses (ScaleError) when the database holds real users, unless ``force``."""
    if bots < 4 or matches < 0 or ladders < 1 or tournaments < 0:
        raise ScaleError("need --bots >= 4, --ladders >= 1 and no negative sizes")
    real = real_users().count()
    if real and not force:
        raise ScaleError(
            f"the database holds {real} user(s) that seed_scale did not create (real users, or the demo's): "
            "use a database of its own, or --force to add the seeded rows beside them"
        )
    progress = progress or (lambda stage, done, total: None)
    rng = random.Random(seed)
    tag = uuid.uuid4().hex[:8]  # a fresh name space per run: a second run adds beside the first
    out = Seeded()
    started = time.monotonic()
    versions = _seed_bots(bots, tag, rng, out, progress)
    out.seconds["users, bots, versions"] = time.monotonic() - started
    started = time.monotonic()
    ladder_rows = _seed_ladders(ladders, tag, versions, rng, out)
    _seed_ladder_matches(ladder_rows, versions, matches, rng, out, progress)
    out.seconds["ladders and matches"] = time.monotonic() - started
    started = time.monotonic()
    _seed_tournaments(tournaments, tag, versions, ladder_rows, rng, out, progress)
    out.seconds["tournaments"] = time.monotonic() - started
    return out


# --- users, bots, versions ----------------------------------------------------------------


def _uploads() -> dict:
    from sandbox.package import BotPackage
    from web.demo import reference_bot_upload

    uploads = {}
    for module in SEED_MODULES:
        filename, data = reference_bot_upload(module)
        uploads[module] = (filename, data, BotPackage.from_bytes(filename, data).sha256)
    return uploads


def _seed_bots(n: int, tag: str, rng: random.Random, out: Seeded, progress) -> dict:
    """Users (3 bots each on average), bots, versions; returns bot id -> (bot, playing version, module)."""
    from bots.models import Bot, BotVersion

    User = get_user_model()
    n_users = max(2, (n * 3) // 10)
    password = make_password(None)  # unusable: nobody logs in as a seeded user
    users = User.objects.bulk_create(
        [User(username=f"{SEED_PREFIX}{tag}-{i}", password=password) for i in range(n_users)], batch_size=BATCH
    )
    out.counts["users"] += len(users)
    progress("bots", 0, n)
    bot_rows = Bot.objects.bulk_create(
        [
            Bot(owner=users[i % n_users], name=f"bot-{tag}-{i}", description=f"Seeded bot {i} ({tag}).",
                source_public=i % 3 == 0)
            for i in range(n)
        ],
        batch_size=BATCH,
    )
    out.counts["bots"] += len(bot_rows)
    uploads = _uploads()
    now = timezone.now()
    rows = []
    playing_module = {}
    for i, bot in enumerate(bot_rows):
        module = SEED_MODULES[rng.randrange(len(SEED_MODULES))]
        chain = [module]
        if i % 10 == 0:  # every tenth bot has an older version of other code
            chain.insert(0, SEED_MODULES[(SEED_MODULES.index(module) + 1) % len(SEED_MODULES)])
        for number, m in enumerate(chain, start=1):
            filename, data, sha = uploads[m]
            rows.append(
                BotVersion(
                    bot=bot, number=number, filename=filename, source=data, sha256=sha, size=len(data),
                    status=BotVersion.Status.ACTIVE, validated_at=now,
                )
            )
        playing_module[bot.pk] = module
    created = BotVersion.objects.bulk_create(rows, batch_size=500)
    out.counts["versions"] += len(created)
    newest = {}
    for version in created:
        if version.number >= newest.get(version.bot_id, (0, None))[0]:
            newest[version.bot_id] = (version.number, version)
    progress("bots", n, n)
    return {bot.pk: (bot, newest[bot.pk][1], playing_module[bot.pk]) for bot in bot_rows}


# --- ladders and their matches ------------------------------------------------------------


def _seed_ladders(n: int, tag: str, versions: dict, rng: random.Random, out: Seeded) -> list:
    from ladders.models import Ladder, LadderEntry

    rows = []
    bot_ids = list(versions)
    for i in range(n):
        seats = LADDER_SEATS[i % len(LADDER_SEATS)]
        ladder = Ladder(
            name=f"Scale {seats}-seat ladder {i + 1} ({tag})", slug=f"{SEED_PREFIX}{tag}-{i + 1}",
            description="Seeded by manage.py seed_scale.", rules={"players": seats, "rounds": 1}, seats=seats,
            deals=1, duplicate=True,
        )
        ladder.full_clean()
        ladder.save()
        # The first ladder has every bot; the others a share of them.
        entered = bot_ids if i == 0 else rng.sample(bot_ids, max(seats * 2, len(bot_ids) * rng.randint(30, 70) // 100))
        LadderEntry.objects.bulk_create([LadderEntry(ladder=ladder, bot_id=b) for b in entered], batch_size=BATCH)
        rows.append(ladder)
        out.counts["ladders"] += 1
        out.counts["ladder entries"] += len(entered)
    return rows


def _play(match):
    """The match played for real in-process, exactly as ``sandboxing.play_match_row`` does with a sandbox."""
    from engine.rules import Rules
    from matches import sandboxing
    from sandbox import runner

    return runner.play_sandboxed_match(
        Rules.from_dict(match.rules), sandboxing.bots_of(match), seed=match.seed, deals=match.deals,
        duplicate=match.duplicate, backend="inprocess",
        limits=sandboxing.match_limits(match.time_per_decision, match.time_bank, match.time_per_match),
    )


def _record(match, outcome) -> None:
    """Store ``outcome`` through the matches services (start, result, hooks)."""
    from matches import services

    token = services.match_start(match.pk)
    if token is None:
        raise ScaleError(f"match {match.pk} could not start")
    if not services.match_record_result(match.pk, token, outcome):
        raise ScaleError(f"match {match.pk}: the result was not stored")


#: the fields a stored result sets on Match and MatchSeat (matches.services.match_record_result)
MATCH_RESULT_FIELDS = (
    "kind", "status", "rules", "seed", "deals", "duplicate", "time_per_decision", "time_bank", "time_per_match",
    "attempts", "rounds_played", "games_played", "timings", "replay_gz", "decision_ms_gz", "error",
)
SEAT_RESULT_FIELDS = (
    "seat", "reference_bot", "score", "rank", "wins", "strikes", "forfeited", "fault_kind", "fault_reason",
    "faults", "log", "log_marks",
)


def _template_of(match_id: int, modules: tuple[str, ...]) -> Template:
    from matches.models import Match

    match = Match.objects.get(pk=match_id)
    seats = list(match.seats.order_by("seat"))
    return Template(
        modules=modules,
        match_fields={f: getattr(match, f) for f in MATCH_RESULT_FIELDS},
        seat_fields=[{f: getattr(s, f) for f in SEAT_RESULT_FIELDS} for s in seats],
    )


def _pick_table(by_module: dict, modules: tuple[str, ...], rng: random.Random, same_owner_ok: bool):
    """Entries (bot ids) whose playing code is ``modules``, seat by seat, distinct bots and owners."""
    for _ in range(50):
        chosen, owners = [], set()
        for module in modules:
            pool = by_module.get(module) or []
            if not pool:
                return None
            bot_id, owner_id = pool[rng.randrange(len(pool))]
            if bot_id in {b for b, _ in chosen} or (not same_owner_ok and owner_id in owners):
                break
            chosen.append((bot_id, owner_id))
            owners.add(owner_id)
        else:
            return [b for b, _ in chosen]
    return None


def _insert(model, objs: list) -> None:
    """Insert ``objs`` as ``bulk_create`` would (every concrete field, the values the model's fields
    prepare for the database); on PostgreSQL by COPY with ids taken from the table's sequence first,
    several times faster than an INSERT of the same rows."""
    from django.db import connection

    if not objs:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objs, batch_size=BATCH)
        return
    meta = model._meta
    fields = list(meta.concrete_fields)
    table = meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
            [connection.ops.quote_name(table), meta.pk.column, len(objs)],
        )
        for obj, (pk,) in zip(objs, cursor.fetchall(), strict=True):
            obj.pk = pk
    now = timezone.now()
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    with connection.connection.cursor() as raw, raw.copy(f"COPY {connection.ops.quote_name(table)} ({columns}) FROM STDIN") as copy:
        for obj in objs:
            row = []
            for f in fields:
                value = getattr(obj, f.attname)
                if value is None and getattr(f, "auto_now_add", False):
                    value = now
                    setattr(obj, f.attname, value)
                row.append(f.get_db_prep_save(value, connection))
            copy.write_row(row)


def _seed_ladder_matches(ladder_rows, versions, total: int, rng, out: Seeded, progress) -> None:
    from bots.models import Bot
    from engine.rules import Rules
    from ladders import ratings
    from ladders.checks import ladder_match_format
    from ladders.models import LadderEntry, LadderMatch, RatingChange
    from ladders.services import ladder_counts_rewrite, ladder_refit
    from matches.models import Match, MatchSeat
    from matches.services import match_create

    if total == 0 or not ladder_rows:
        return
    sizes = [LadderEntry.objects.filter(ladder=ladder).count() for ladder in ladder_rows]
    shares = [total * s // sum(sizes) for s in sizes]
    shares[0] += total - sum(shares)
    done = 0
    progress("matches", 0, total)
    span = timedelta(days=60)
    end = timezone.now()
    for ladder, share in zip(ladder_rows, shares, strict=True):
        if share == 0:
            continue
        entries = {e.bot_id: e for e in LadderEntry.objects.filter(ladder=ladder)}
        by_module = defaultdict(list)
        for bot_id in entries:
            bot, _version, module = versions[bot_id]
            by_module[module].append((bot_id, bot.owner_id))
        rules = Rules.from_dict(ladder.rules)
        match_format = ladder_match_format(ladder)
        templates = []
        # 1. a few matches for real, through the services and the ladder's result hook
        for _ in range(min(TEMPLATES_PER_LADDER, share)):
            modules = tuple(SEED_MODULES[rng.randrange(len(SEED_MODULES))] for _ in range(ladder.seats))
            table = _pick_table(by_module, modules, rng, ladder.allow_same_owner)
            if table is None:
                continue
            with transaction.atomic():
                match = match_create(
                    kind=Match.Kind.LADDER, rules=rules, seats=[versions[b][1] for b in table],
                    seed=rng.getrandbits(62), enqueue=False, **match_format,
                )
                LadderMatch.objects.create(ladder=ladder, match=match)
            match = Match.objects.prefetch_related("seats__bot_version__bot").get(pk=match.pk)
            _record(match, _play(match))
            templates.append(_template_of(match.pk, modules))
            done += 1
            progress("matches", done, total)
        if not templates:
            raise ScaleError(f"ladder {ladder.slug}: no table of distinct owners could be seated")
        out.counts["matches played for real"] += len(templates)
        # 2. the rest: copies of the stored rows, rated in order as the hook rates them
        entries = {e.bot_id: e for e in LadderEntry.objects.filter(ladder=ladder)}
        elo = {bot_id: ratings.Rating(e.rating, e.matches_played) for bot_id, e in entries.items()}
        last_matched = {}
        remaining = share - len(templates)
        step = span / max(1, remaining)
        start = end - span
        index = 0
        while remaining > 0:
            batch = min(BATCH, remaining)
            rows, tables = [], []
            for _ in range(batch):
                template = templates[rng.randrange(len(templates))]
                table = _pick_table(by_module, template.modules, rng, ladder.allow_same_owner)
                if table is None:
                    continue
                finished = start + step * index
                index += 1
                rows.append(Match(
                    **template.match_fields, queued_at=finished - timedelta(seconds=7),
                    enqueued_at=finished - timedelta(seconds=3),
                    started_at=finished - timedelta(seconds=2), finished_at=finished,
                    deadline=finished + timedelta(minutes=15), attempt_token="",
                ))
                tables.append((template, table))
            with transaction.atomic():
                queued = [m.queued_at for m in rows]
                _insert(Match, rows)
                if [m.queued_at for m in rows] != queued:
                    # bulk_create (not PostgreSQL) sets auto_now_add fields to now: put them in the history
                    Match.objects.filter(pk__gte=rows[0].pk, pk__lte=rows[-1].pk).update(
                        queued_at=F("started_at") - timedelta(seconds=5)
                    )
                    for match in rows:  # as stored: the seats copy it
                        match.queued_at = match.started_at - timedelta(seconds=5)
                seats, links, changes = [], [], []
                for match, (template, table) in zip(rows, tables, strict=True):
                    for fields, bot_id in zip(template.seat_fields, table, strict=True):
                        seats.append(MatchSeat(match=match, bot_version=versions[bot_id][1], **fields).fill_copies())
                    links.append(LadderMatch(ladder=ladder, match=match, rated=True))
                    before = {b: elo[b] for b in table}
                    ranked = [(b, f["rank"]) for f, b in zip(template.seat_fields, table, strict=True)]
                    after = ratings.rate_match(before, ranked)
                    for (bot_id, rank) in ranked:
                        changes.append(RatingChange(
                            ladder=ladder, match=match, entry=entries[bot_id], bot_version=versions[bot_id][1],
                            rank=rank, before=before[bot_id].value, after=after[bot_id].value,
                            matches_after=after[bot_id].matches, created_at=match.finished_at,
                        ))
                        elo[bot_id] = after[bot_id]
                        last_matched[bot_id] = match.finished_at
                _insert(MatchSeat, seats)
                # _insert skips match_create, which marks a ladder match's entrants
                Bot.objects.filter(
                    pk__in={bot_id for _template, table in tables for bot_id in table}, plays_in_events=False
                ).update(plays_in_events=True)
                _insert(LadderMatch, links)
                _insert(RatingChange, changes)
            out.counts["matches copied"] += len(rows)
            out.counts["rating changes"] += len(changes)
            remaining -= batch
            done += batch
            progress("matches", done, total)
        for bot_id, entry in entries.items():
            entry.rating = elo[bot_id].value
            entry.matches_played = elo[bot_id].matches
            entry.last_matched_at = last_matched.get(bot_id, entry.last_matched_at)
        LadderEntry.objects.bulk_update(list(entries.values()), ["rating", "matches_played", "last_matched_at"],
                                        batch_size=BATCH)
        # The stored ratings are the batch fit of every result, as the worker's refit writes them, so
        # recompute_ratings --check finds them true. The history's points above come from the cheap
        # match-by-match ratings.rate_match (a refit per result would take hours at 200,000 matches);
        # each entry's newest point waits for this refit, as the points of results stored since the
        # last refit do on the platform, and gets the fit's rating.
        newest = RatingChange.objects.filter(ladder=ladder).values("entry_id").annotate(newest=Max("pk"))
        RatingChange.objects.filter(pk__in=newest.values("newest")).update(after=None, after_low=None, after_high=None)
        ladder_refit(ladder, force=True)
        # the counts the result hook and the refit keep (wins, last change), from the rows copied
        ladder_counts_rewrite(ladder)


# --- tournaments --------------------------------------------------------------------------


def _seed_tournaments(n: int, tag: str, versions: dict, ladder_rows, rng, out: Seeded, progress) -> None:
    from tournaments_app import services as t_services
    from tournaments_app.models import Table, Tournament

    if n == 0:
        return
    # one bot per owner, so no table seats one owner twice
    per_owner = {}
    for bot, _version, _module in versions.values():
        per_owner.setdefault(bot.owner_id, bot)
    candidates = list(per_owner.values())
    played = {}
    progress("tournaments", 0, n)
    for i in range(n):
        fmt = Tournament.Format.ROUND_ROBIN if i % 2 == 0 else Tournament.Format.SWISS
        sizes = ROUND_ROBIN_SIZES if fmt == Tournament.Format.ROUND_ROBIN else SWISS_SIZES
        size = min(sizes[(i // 2) % len(sizes)], len(candidates))
        entrants = rng.sample(candidates, size)
        # One transaction: the tasks each start enqueues run (eagerly, or on a worker) only after
        # every match is stored, and then find nothing to play.
        with transaction.atomic():
            tournament = t_services.tournament_create(
                name=f"Scale {fmt.label} {i + 1} ({tag})", slug=f"{SEED_PREFIX}{tag}-{fmt}-{i + 1}", format=fmt,
                rules=["players=2", "rounds=1"], seed=rng.getrandbits(48),
                description="Seeded by manage.py seed_scale.",
                seed_ladder=ladder_rows[0] if fmt == Tournament.Format.SWISS and ladder_rows else None,
            )
            for bot in entrants:
                t_services.entry_add(tournament, bot)
            t_services.tournament_start(tournament)
            for _ in range(10_000):
                open_pairings = list(
                    Table.objects.filter(round__tournament=tournament, done=False, bye=False, match__isnull=False)
                    .select_related("match").order_by("round__number", "number")
                )
                if not open_pairings:
                    break
                for pairing in open_pairings:
                    match = pairing.match
                    match = type(match).objects.prefetch_related("seats__bot_version__bot").get(pk=match.pk)
                    key = (
                        repr(sorted(match.rules.items())), match.seed, match.deals, match.duplicate,
                        tuple(s.bot_version.sha256 for s in sorted(match.seats.all(), key=lambda s: s.seat)),
                    )
                    if key not in played:
                        played[key] = _play(match)
                        out.counts["tournament matches played for real"] += 1
                    _record(match, played[key])
                    out.counts["tournament matches"] += 1
            tournament.refresh_from_db()
            if tournament.status != Tournament.Status.FINISHED:
                raise ScaleError(f"tournament {tournament.slug} is {tournament.status} after its matches")
        out.counts["tournaments"] += 1
        progress("tournaments", i + 1, n)
