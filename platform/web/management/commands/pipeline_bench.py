"""``manage.py pipeline_bench``: ladder matches through Celery, Redis, PostgreSQL and Docker, against
two floors measured in the same run (web.pipelinebench)."""

from __future__ import annotations

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from arena_cli.progress import StagedProgress
from web import pipelinebench


class Command(BaseCommand):
    help = (
        "Queue N ladder-format matches (2 and 4 seats, scratch bots and ladders) through W real Celery workers "
        "of the run's own (Redis key prefix), PostgreSQL and Docker seats; report matches/s and decisions/s per "
        "worker core, seat start p50, the shares of seat start, decisions, stop and bookkeeping in the workers' "
        "time, and two floors of the same run: in-process play of the same matches and bare container "
        "start+stop. Refuses a database with real users unless --force; removes its scratch rows at the end."
    )

    def add_arguments(self, parser):
        parser.add_argument("--matches", type=int, default=60, help="matches to queue (default 60)")
        parser.add_argument("--workers", type=int, default=None, help="worker processes (default: the machine's cores)")
        parser.add_argument("--four-seat-share", type=float, default=1 / 3, help="share of 4-seat matches (default 1/3)")
        parser.add_argument("--warm", type=int, default=None,
                            help="warm seats per worker (SANDBOX_DOCKER_WARM for the workers; default: the environment's)")
        parser.add_argument("--timeout", type=float, default=1800.0, help="seconds to wait for the matches")
        parser.add_argument("--force", action="store_true", help="run beside users seed_scale/pipeline_bench did not create")
        parser.add_argument("--keep", action="store_true", help="keep the scratch rows (named pipeline-bench-<tag>-...)")
        parser.add_argument("--json", action="store_true", help="print the report as JSON")

    def handle(self, *args, **options):
        progress = StagedProgress(label="pipeline_bench ", stream=sys.stderr)

        try:
            report = pipelinebench.run(
                matches=options["matches"], workers=options["workers"], four_seat_share=options["four_seat_share"],
                warm=options["warm"], timeout=options["timeout"], force=options["force"], keep=options["keep"],
                progress=progress,
            )
        except pipelinebench.BenchError as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.stdout.write(pipelinebench.summary(report))
