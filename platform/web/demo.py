"""The demo data of ``manage.py seed_demo``: users, the reference bots as real uploads, matches.

Everything goes through the same services as the site: uploads are checked
by sandbox.package and validated by a real match; matches are played by the
match task (in-process on the embedded default, by workers with a broker).
Running it twice changes nothing the second time.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

import engine
from bots import services
from bots.models import Bot
from bots.selectors import bot_playing_version
from engine.rules import Rules
from sandbox.package import BotPackage

DEMO_PASSWORD = "uno-arena-demo"

#: username -> [(bot name, reference bot module, description)]
DEMO_BOTS = {
    "ada": [
        ("random", "random_bot", "Plays a uniformly random legal action (the reference bot random)."),
        ("first", "first", "Always takes the first legal action (the reference bot first)."),
    ],
    "grace": [("greedy", "greedy", "Sheds high-point cards first and keeps its wilds (reference bot greedy).")],
    "linus": [("expert", "expert", "Counts colours and punishes a player on UNO (reference bot expert).")],
}

#: (seed, bot names in seat order, extra rules, deals, duplicate)
DEMO_MATCHES = [
    (1001, ["greedy", "random"], ["rounds=3"], 1, False),
    (1002, ["expert", "greedy"], ["rounds=3"], 1, False),
    (1003, ["first", "expert"], ["rounds=2"], 2, True),
    (1004, ["random", "first", "greedy", "expert"], ["rounds=2"], 1, False),
    (1005, ["expert", "random", "greedy"], ["rounds=2"], 1, False),
]


def reference_bot_upload(module: str) -> tuple[str, bytes]:
    """A reference bot of engine/bots as an upload: its .py file, or a zip with what it imports.

    ``random`` and ``first`` are self-contained modules; ``greedy`` and ``expert``
    import ``engine.bots._view`` and ``engine.cards``, so their upload is a zip
    holding those source files beside a ``main.py`` that imports the agent.
    """
    bots_dir = Path(engine.__file__).resolve().parent / "bots"
    source = (bots_dir / f"{module}.py").read_bytes()
    if b"from engine" not in source and b"import engine" not in source:
        return f"{module}.py", source
    engine_dir = bots_dir.parent
    files = {
        "main.py": f"from engine.bots.{module} import agent  # noqa: F401\n".encode(),
        "engine/__init__.py": (engine_dir / "__init__.py").read_bytes(),
        "engine/cards.py": (engine_dir / "cards.py").read_bytes(),
    }
    for path in sorted(bots_dir.glob("*.py")):
        files[f"engine/bots/{path.name}"] = path.read_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            # A fixed timestamp keeps the bytes (and so the sha256) the same on every run.
            archive.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), content)
    return f"{module}.zip", buffer.getvalue()


def demo_seed(log=print) -> dict:
    """Create what is missing of the demo; returns counts of what was created."""
    from matches.models import Match
    from matches.services import match_create

    created = {"users": 0, "bots": 0, "versions": 0, "matches": 0}
    User = get_user_model()
    playing: dict[str, Bot] = {}
    for username, bots in DEMO_BOTS.items():
        user, new = User.objects.get_or_create(username=username)
        if new:
            user.set_password(DEMO_PASSWORD)
            user.save(update_fields=["password"])
            created["users"] += 1
            log(f"user {username} (password {DEMO_PASSWORD!r})")
        for name, module, description in bots:
            bot = Bot.objects.filter(owner=user, name=name).first()
            if bot is None:
                bot = services.bot_create(owner=user, name=name, description=description, source_public=True)
                created["bots"] += 1
            filename, data = reference_bot_upload(module)
            if not bot.versions.filter(sha256=BotPackage.from_bytes(filename, data).sha256).exists():
                version = services.bot_version_create(bot=bot, filename=filename, data=data)
                created["versions"] += 1
                version.refresh_from_db()
                log(f"bot {bot} v{version.number} ({filename}): {version.status} {version.rejection_reason}")
            playing[name] = bot
    for seed, names, rules, deals, duplicate in DEMO_MATCHES:
        if Match.objects.filter(kind=Match.Kind.CHALLENGE, seed=seed).exists():
            continue
        versions = [bot_playing_version(playing[name]) for name in names]
        if any(v is None for v in versions):
            log(f"match {seed} skipped: not every bot of {names} has an active version yet")
            continue
        with transaction.atomic():
            match = match_create(
                kind=Match.Kind.CHALLENGE, rules=Rules.parse([f"players={len(names)}", *rules]), seats=versions,
                seed=seed, deals=deals, duplicate=duplicate,
            )
        created["matches"] += 1
        match.refresh_from_db()
        log(f"match #{match.pk} {' vs '.join(names)}: {match.status}")
    from ladders.demo import ladder_demo_seed  # the ladders app builds on bots, not the reverse

    created.update(ladder_demo_seed(playing.values(), log=log))
    from tournaments_app.demo import demo_tournaments  # tournaments build on bots, not the reverse

    created["tournaments"] = demo_tournaments(list(playing.values()), password=DEMO_PASSWORD, log=log)
    return created


