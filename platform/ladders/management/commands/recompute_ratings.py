"""manage.py recompute_ratings [--ladder SLUG] [--check]: rate every ladder's history again from 1500."""

from django.core.management.base import BaseCommand, CommandError

from ladders.models import Ladder
from ladders.services import ladder_ratings_recompute


class Command(BaseCommand):
    help = (
        "Recompute ladder ratings from the whole match history. With --check, only compare with the "
        "stored values, print every difference and exit non-zero when there is one."
    )

    def add_arguments(self, parser):
        parser.add_argument("--ladder", metavar="SLUG", help="only this ladder (default: all)")
        parser.add_argument("--check", action="store_true", help="report differences, change nothing")

    def handle(self, *args, ladder=None, check=False, **options):
        ladders = Ladder.objects.order_by("slug")
        if ladder:
            ladders = ladders.filter(slug=ladder)
            if not ladders.exists():
                known = ", ".join(Ladder.objects.order_by("slug").values_list("slug", flat=True)) or "none"
                raise CommandError(f"no ladder with slug {ladder!r} (known: {known})")
        total = 0
        for item in ladders:
            differences = ladder_ratings_recompute(item, write=not check)
            total += len(differences)
            for difference in differences:
                self.stdout.write(f"{item.slug}: {difference}")
            verb = "differ from" if check else "rewritten from"
            status = f"{len(differences)} stored value(s) {verb} the history" if differences else "reproduced exactly"
            self.stdout.write(f"{item.slug}: {status}")
        if check and total:
            raise CommandError(f"{total} stored rating value(s) differ from a recomputation of the history")
