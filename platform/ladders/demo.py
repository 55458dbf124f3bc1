"""The ladder of the demo (``manage.py seed_demo``): the reference bots entered and a few rated matches.

Everything goes through the ladder services: entering, then matchmaking
rounds as beat would run them. On the embedded default (no broker) each
round's matches are played in-process before the next round starts; with a
broker they are queued for the workers and beat carries on. Running it
again adds nothing once the ladder has its rated matches.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

from bots.models import Bot
from bots.selectors import bot_playing_version

from . import services
from .models import Ladder, LadderEntry, LadderMatch

DEMO_LADDER = {
    "slug": "reference",
    "name": "Reference ladder",
    "description": "The reference bots (random, first, greedy, expert) and anyone who enters: "
    "2 seats, 2-round games, each deal played from both seats.",
    "rules": {"players": 2, "rounds": 2},
    "seats": 2,
    "deals": 1,
    "duplicate": True,
    "max_pending": 2,
}
#: rated matches the demo ladder gets before the site opens
DEMO_RATED_MATCHES = 8
#: matchmaking rounds at most (a round fills the ladder's cap of pending matches)
DEMO_ROUNDS = 8


def ladder_demo_seed(bots: Iterable[Bot], log=print, *, seed: int = 2026) -> dict:
    """Create the demo ladder, enter ``bots`` and run matchmaking rounds; returns counts created."""
    created = {"ladders": 0, "ladder matches": 0}
    fields = dict(DEMO_LADDER)
    ladder = Ladder.objects.filter(slug=fields["slug"]).first()
    if ladder is None:
        ladder = Ladder(**fields)
        ladder.full_clean()
        ladder.save()
        created["ladders"] += 1
        log(f"ladder {ladder.name} (/ladders/{ladder.slug}/)")
    for bot in bots:
        if bot_playing_version(bot) is None:
            log(f"ladder: {bot} has no active version; not entered")
            continue
        if not LadderEntry.objects.filter(ladder=ladder, bot=bot).exists():
            services.ladder_enter(ladder, bot)
            log(f"ladder: {bot} entered")
    rng = random.Random(seed)
    for _ in range(DEMO_ROUNDS):
        if LadderMatch.objects.filter(ladder=ladder).count() >= DEMO_RATED_MATCHES:
            break
        matches = services.ladder_matchmake(ladder, rng=rng)
        created["ladder matches"] += len(matches)
        for match in matches:
            match.refresh_from_db()
            log(f"ladder match #{match.pk}: {match.status}")
    return created
