"""The tournaments of the demo (``manage.py seed_demo``): a round robin and a Swiss of the reference bots.

Created, entered and started through the same services an organizer uses;
their matches are played by the match task like any other (in-process on the
embedded default, by workers when a broker is configured). Running it twice
changes nothing the second time.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from . import services
from .models import Tournament

ORGANIZER = "organizer"
#: what the demo organizer may do in the admin: run tournaments and ladders (the organizer-run
#: competitions), look at the bots, their versions (the admin never shows a version's source) and matches.
#: Never users: an organizer has no business reading accounts, so the admin shows them as plain text.
ORGANIZER_PERMISSIONS = [
    ("tournaments", "add_tournament"), ("tournaments", "change_tournament"), ("tournaments", "view_tournament"),
    ("tournaments", "change_entry"), ("tournaments", "view_entry"), ("tournaments", "view_tournamentround"),
    ("tournaments", "view_tournamentevent"),
    ("ladders", "add_ladder"), ("ladders", "change_ladder"), ("ladders", "view_ladder"),
    ("ladders", "view_ladderentry"),
    ("bots", "view_bot"), ("bots", "view_botversion"), ("matches", "view_match"),
]

#: (name, slug, format, rule options, seed, description); short rules keep seeding fast
DEMO_TOURNAMENTS = [
    ("Demo Round Robin", "demo-round-robin", Tournament.Format.ROUND_ROBIN, ["players=2", "rounds=1"], 2001,
     "Every reference bot meets every other once; one deal per match, played from both seats."),
    ("Demo Swiss", "demo-swiss", Tournament.Format.SWISS, ["players=2", "rounds=1"], 2002,
     "Two Swiss rounds: winners meet winners in round 2."),
]


def demo_organizer(password: str, log=print):
    """A staff user who may run tournaments in the admin (not a superuser)."""
    User = get_user_model()
    user, new = User.objects.get_or_create(username=ORGANIZER, defaults={"is_staff": True})
    if new:
        user.set_password(password)
        user.save(update_fields=["password"])
        log(f"user {ORGANIZER} (staff, runs tournaments and ladders in /admin/; password {password!r})")
    # Every time, so a demo seeded before the role grew gets the permissions added since (adding is idempotent).
    for app_label, codename in ORGANIZER_PERMISSIONS:
        permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
        if permission is not None:
            user.user_permissions.add(permission)
    return user


def demo_tournaments(bots, *, password: str, log=print) -> int:
    """Create and start the demo tournaments that do not exist yet; returns how many were created."""
    from bots.selectors import bot_playing_version

    ready = [bot for bot in bots if bot_playing_version(bot) is not None]
    if len(ready) < 2:
        log(f"tournaments skipped: {len(ready)} of {len(bots)} demo bots have an active version so far")
        return 0
    organizer = demo_organizer(password, log)
    created = 0
    for name, slug, format, rules, seed, description in DEMO_TOURNAMENTS:
        if Tournament.objects.filter(slug=slug).exists():
            continue
        tournament = services.tournament_create(
            name=name, slug=slug, format=format, rules=rules, seed=seed, description=description, actor=organizer,
            allow_same_owner=True,  # the demo's reference bots all belong to one demo user
        )
        for bot in ready:
            services.entry_add(tournament, bot, actor=organizer)
        services.tournament_start(tournament, actor=organizer)
        created += 1
        tournament.refresh_from_db()
        log(f"tournament {name}: {tournament.status}, round {tournament.current_round} of {tournament.total_rounds}")
    return created
