"""``manage.py seed_scale``: a database at the size of a real competition (web.scale)."""

from __future__ import annotations

import logging
import sys
import time

from django.core.management.base import BaseCommand, CommandError

from arena_cli.progress import StagedProgress
from web import scale


class Command(BaseCommand):
    help = (
        "Fill the database with seeded users, bots, ladders with rated matches and finished tournaments, "
        "shaped as the platform writes them (web.scale). Refuses a database with real users unless --force."
    )

    def add_arguments(self, parser):
        parser.add_argument("--bots", type=int, default=1000)
        parser.add_argument("--matches", type=int, default=200_000, help="ladder matches")
        parser.add_argument("--ladders", type=int, default=5)
        parser.add_argument("--tournaments", type=int, default=20)
        parser.add_argument("--seed", type=int, default=19, help="seed of every random choice")
        parser.add_argument("--force", action="store_true", help="add beside users seed_scale did not create")

    def handle(self, *args, **options):
        progress = StagedProgress(label="seed_scale ", stream=sys.stderr)

        # every eager task of a tournament logs a line; the counts at the end say what was done
        logging.getLogger("celery.app.trace").setLevel(logging.WARNING)
        started = time.monotonic()
        try:
            seeded = scale.seed_scale(
                bots=options["bots"], matches=options["matches"], ladders=options["ladders"],
                tournaments=options["tournaments"], seed=options["seed"], force=options["force"], progress=progress,
            )
        except scale.ScaleError as exc:
            raise CommandError(str(exc)) from None
        finally:
            progress.close()
        for what, count in seeded.counts.items():
            self.stdout.write(f"{what}: {count}")
        for stage, seconds in seeded.seconds.items():
            self.stdout.write(f"{stage}: {seconds:.1f} s")
        self.stdout.write(f"total: {time.monotonic() - started:.1f} s")
