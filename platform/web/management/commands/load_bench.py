"""``manage.py load_bench``: time every page and API list or detail against a running server (web.loadbench)."""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from arena_cli.progress import Progress
from web import ladderbench, loadbench


class Command(BaseCommand):
    help = (
        "Request every page and API list and detail (ids from this database) from a server on this "
        "machine, interleaved with the trivial view /healthz; report p50/p95/p99, requests per second, "
        "the ratio to the trivial view, bytes and queries per request."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="the server (loopback only)")
        parser.add_argument("--requests", type=int, default=20, help="rounds over every path (at most)")
        parser.add_argument("--seconds", type=float, default=120.0, help="stop starting rounds after this")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")
        parser.add_argument(
            "--ladder-work", action="store_true",
            help="also time every ladder's matchmaking pass (rolled back) and the biggest ladder's "
            "recompute_ratings --check and refit under lock probes (writes that ladder's ratings: "
            "seeded databases only)",
        )
        parser.add_argument("--only-ladder-work", action="store_true", help="the ladder work alone, no server")

    def handle(self, *args, **options):
        if options["requests"] < 1 or options["seconds"] <= 0:
            raise CommandError("--requests must be 1 or more and --seconds more than 0")
        report: dict = {}
        if not options["only_ladder_work"]:
            bar = Progress(options["requests"], label="load_bench ", stream=sys.stderr)
            try:
                report = loadbench.run(
                    options["url"], requests=options["requests"], seconds=options["seconds"],
                    progress=lambda done, _total: bar.update(done),
                )
            except loadbench.BenchError as exc:
                raise CommandError(str(exc)) from None
            finally:
                bar.close()
        if options["ladder_work"] or options["only_ladder_work"]:
            try:
                report["ladder_work"] = ladderbench.run()
            except ValueError as exc:
                raise CommandError(str(exc)) from None
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        if "pages" in report:
            self.stdout.write(loadbench.table(report))
        if "ladder_work" in report:
            self.stdout.write(ladderbench.table(report["ladder_work"]))
