"""manage.py ladder_matchmake [--rounds N]: what the beat task does, run by hand (embedded default)."""

from django.core.management.base import BaseCommand

from ladders.services import ladder_matchmake_all


class Command(BaseCommand):
    help = (
        "Run ladder matchmaking now, N rounds. On the embedded default (no broker) the matches are "
        "played in-process before the next round; with a broker they are queued for the workers."
    )

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=1, help="matchmaking rounds (default 1)")

    def handle(self, *args, rounds=1, **options):
        for number in range(1, rounds + 1):
            created = ladder_matchmake_all()
            summary = ", ".join(f"{slug}: {n}" for slug, n in created.items()) or "no active ladder"
            self.stdout.write(f"round {number}: {summary}")
