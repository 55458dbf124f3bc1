"""manage.py recompute_ratings [--ladder SLUG] [--check]: fit every ladder's results again from scratch."""

from django.core.management.base import BaseCommand, CommandError

from ladders.models import Ladder
from ladders.ratings import CHECK_TOLERANCE
from ladders.services import ladder_ratings_recompute


class Command(BaseCommand):
    help = (
        "Fit ladder ratings again from the stored results (a cold start) and compare with the stored "
        f"ratings, intervals, results and likelihoods of superiority (within {CHECK_TOLERANCE} points). "
        "With --check, change nothing (and lock nothing), print every difference and exit non-zero when "
        "there is one; without it, refit and write the ladder's ratings."
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
            status = (
                f"{len(differences)} stored value(s) {verb} a refit of the results"
                if differences
                else f"reproduced by a refit of the results (within {CHECK_TOLERANCE} points)"
            )
            self.stdout.write(f"{item.slug}: {status}")
        if check and total:
            raise CommandError(f"{total} stored rating value(s) differ from a refit of the stored results")
