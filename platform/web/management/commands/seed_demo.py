"""manage.py seed_demo: demo users, the reference bots as uploaded versions, a few matches."""

from django.core.management.base import BaseCommand

from web.demo import demo_seed


class Command(BaseCommand):
    help = "Create demo users, upload the reference bots as real bot versions, play a few matches (idempotent)."

    def handle(self, *args, **options):
        created = demo_seed(log=self.stdout.write)
        summary = ", ".join(f"{n} {what}" for what, n in created.items())
        self.stdout.write(self.style.SUCCESS(f"seed_demo: created {summary}"))
