"""``manage.py load_bench --ladder-work``: the ladders' own work at scale (issue 19, point 4).

Pages are one half of a site at scale; the other is the work behind them, which must keep up and
never make a result wait. For every ladder of the database this times:

- **matchmaking**: ``ladders.services.ladder_matchmake`` passes (``repeat`` of them, seeded
  ``random.Random(i)``), each inside a transaction that is rolled back, so the database is left as
  it was and each pass sees the same free entries: wall and thread CPU time and the queries of
  each pass, and the matches it would have made;
- **the check**: ``recompute_ratings --check`` (``ladder_ratings_recompute``, no write) of the
  biggest ladder, while a second connection takes, over and over, the locks a result takes
  (``ladder_match_finish``: the ladder's row, then its entries' rows, ``FOR UPDATE``) and the
  lock matchmaking takes (the ladder's row): how long each probe waited, and how many there were;
- **the refit**: ``ladder_refit(force=True)`` of the biggest ladder under the same probes, after
  every entry's stored rating was moved by 0.01 point (as one more result moves the whole fit), so
  the refit rewrites every entry as it does after a result. It writes the ratings it fits, as the
  worker's refit task does: run this on a database seeded for benchmarks only (it refuses one with
  real users, as ``seed_scale`` does).

A probe that waited as long as the work took would show a lock held throughout; the design holds
none during a fit (docs/ratings.md) and takes the ladder's row only for the refit's short write.
"""

from __future__ import annotations

import random
import statistics
import threading
import time

#: entries' rows each lock probe takes, as a result of a match of that many seats would
PROBE_ENTRIES = 4
#: pause between two lock probes
PROBE_PAUSE = 0.02
#: the longest a probe may wait for a lock before it counts as blocked
PROBE_LOCK_TIMEOUT_MS = 30_000


class _RolledBack(Exception):
    """Raised inside a matchmaking pass's transaction to undo it."""


def matchmaking(ladder, repeat: int) -> dict:
    """``repeat`` matchmaking passes of ``ladder``, each rolled back: times, queries, matches made."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from ladders.models import LadderEntry
    from ladders.services import ladder_matchmake

    walls, cpus, queries, made = [], [], [], []
    for i in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                with transaction.atomic():
                    made.append(len(ladder_matchmake(ladder, rng=random.Random(i))))
                    walls.append(time.perf_counter() - wall)
                    cpus.append(time.thread_time() - cpu)
                    raise _RolledBack
            except _RolledBack:
                pass
        queries.append(len(captured))
    return {
        "ladder": ladder.slug,
        "seats": ladder.seats,
        "entries": LadderEntry.objects.filter(ladder=ladder).count(),
        "passes": repeat,
        "wall_ms": _spread(walls),
        "cpu_ms": _spread(cpus),
        "queries": sorted(set(queries)),
        "matches_made": sorted(set(made)),
    }


def _spread(seconds: list[float]) -> dict:
    return {
        "p50": round(statistics.median(seconds) * 1000, 1),
        "min": round(min(seconds) * 1000, 1),
        "max": round(max(seconds) * 1000, 1),
    }


class LockProbe(threading.Thread):
    """Takes, on its own connection and over and over, the row locks a result and matchmaking take
    on ``ladder_id`` (the ladder's row, then ``PROBE_ENTRIES`` entries' rows, ``FOR UPDATE``) and
    records how long each acquisition waited."""

    def __init__(self, ladder_id: int) -> None:
        super().__init__(name="ladderbench-lock-probe", daemon=True)
        self.ladder_id = ladder_id
        self.waits: list[float] = []
        self.blocked = 0
        self.error: BaseException | None = None
        self._finish = threading.Event()

    def run(self) -> None:
        from django.db import OperationalError, connection, transaction

        from ladders.models import Ladder, LadderEntry

        try:
            entries = list(
                LadderEntry.objects.filter(ladder_id=self.ladder_id).order_by("pk").values_list("pk", flat=True)[
                    :PROBE_ENTRIES
                ]
            )
            while not self._finish.is_set():
                started = time.perf_counter()
                try:
                    with transaction.atomic():
                        if connection.vendor == "postgresql":
                            with connection.cursor() as cursor:
                                cursor.execute(f"SET LOCAL lock_timeout = {PROBE_LOCK_TIMEOUT_MS}")
                        list(Ladder.objects.select_for_update().filter(pk=self.ladder_id).values_list("pk"))
                        list(LadderEntry.objects.select_for_update().filter(pk__in=entries).values_list("pk"))
                        self.waits.append(time.perf_counter() - started)
                except OperationalError:
                    self.blocked += 1
                time.sleep(PROBE_PAUSE)
        except BaseException as exc:  # reported by stop(), never lost in a thread
            self.error = exc
        finally:
            connection.close()

    def stop(self) -> dict:
        self._finish.set()
        self.join()
        if self.error is not None:
            raise self.error
        return {
            "probes": len(self.waits) + self.blocked,
            "blocked": self.blocked,
            "wait_ms": _spread(self.waits) if self.waits else None,
        }


def _refit_after_a_move(ladder) -> dict:
    """Move every entry's stored rating of ``ladder`` by 0.01 point (committed; outside the timing),
    then refit it: what the refit after one more result writes."""
    from decimal import Decimal

    from django.db.models import F

    from ladders.models import LadderEntry
    from ladders.services import ladder_refit

    moved = LadderEntry.objects.filter(ladder=ladder).update(rating=F("rating") + Decimal("0.01"))

    def work() -> dict:
        return {"ladder": ladder.slug, "entries_moved": moved, "written": ladder_refit(ladder, force=True)}

    return _under_probe(ladder.pk, work)


def _under_probe(ladder_id: int, work) -> dict:
    probe = LockProbe(ladder_id)
    probe.start()
    time.sleep(PROBE_PAUSE * 5)  # a few probes before the work, as a baseline
    wall, cpu = time.perf_counter(), time.thread_time()
    outcome = work()
    figures = {"wall_s": round(time.perf_counter() - wall, 2), "cpu_s": round(time.thread_time() - cpu, 2)}
    figures["locks"] = probe.stop()
    return {**figures, **outcome}


def run(*, repeat: int = 7) -> dict:
    """Matchmaking of every active ladder, the check and the refit of the biggest, with lock probes."""
    from django.db.models import Count

    from ladders.models import Ladder
    from ladders.services import ladder_ratings_recompute
    from web.scale import real_users

    if real_users().exists():
        raise ValueError(
            "the ladder work writes ratings (the refit): run it on a database seeded for benchmarks "
            "(seed_scale), not one with real users"
        )
    ladders = list(Ladder.objects.filter(active=True).annotate(n=Count("entries")).order_by("-n", "pk"))
    if not ladders:
        raise ValueError("the database has no active ladder: run seed_scale first")
    biggest = ladders[0]
    return {
        "matchmaking": [matchmaking(ladder, repeat) for ladder in ladders],
        "check": _under_probe(
            biggest.pk, lambda: {"ladder": biggest.slug, "differences": len(ladder_ratings_recompute(biggest))}
        ),
        "refit": _refit_after_a_move(biggest),
    }


def table(report: dict) -> str:
    """The report as Markdown."""
    lines = [
        "| ladder | seats | entries | passes | wall p50 / max ms | CPU p50 / max ms | queries | matches made |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for row in report["matchmaking"]:
        lines.append(
            f"| {row['ladder']} | {row['seats']} | {row['entries']} | {row['passes']} | "
            f"{row['wall_ms']['p50']} / {row['wall_ms']['max']} | {row['cpu_ms']['p50']} / {row['cpu_ms']['max']} | "
            f"{', '.join(map(str, row['queries']))} | {', '.join(map(str, row['matches_made']))} |"
        )
    lines.append("")
    for name in ("check", "refit"):
        item = report[name]
        locks = item["locks"]
        wait = locks["wait_ms"] or {"p50": "-", "max": "-"}
        lines.append(
            f"{name} of {item['ladder']}: {item['wall_s']} s wall, {item['cpu_s']} s CPU; "
            f"{locks['probes']} lock probes meanwhile, {locks['blocked']} blocked, "
            f"wait p50 {wait['p50']} ms, max {wait['max']} ms"
        )
    return "\n".join(lines)
