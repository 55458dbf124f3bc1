"""Services of the bots app: create bots, store uploaded versions, finish their validation."""

from __future__ import annotations

import re

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.module_loading import import_string

from sandbox.package import BotPackage, PackageError

from .models import Bot, BotVersion, SourceAccess
from .selectors import OWNER, private_read_reason


class BotError(ValueError):
    """A request about a bot or a version is refused; the message is shown to the user."""


def bot_create(*, owner, name: str, description: str = "", source_public: bool = False) -> Bot:
    """Create a bot; its name must be unique among the owner's bots."""
    name = name.strip()
    if not name:
        raise BotError("a bot needs a name")
    if "/" in name or not name.isprintable():
        raise BotError(
            f"{name!r}: a bot name may not contain '/' (it separates owner and bot, as in ada/mybot) "
            "or control characters"
        )
    # case-insensitively: "MyBot" beside "mybot" would be two bots no one can tell apart
    same = Bot.objects.filter(owner=owner, name__iexact=name).values_list("name", flat=True).first()
    if same is not None:
        raise BotError(f"you already have a bot named {same!r}")
    try:
        with transaction.atomic():
            return Bot.objects.create(
                owner=owner, name=name, description=description, source_public=source_public
            )
    except IntegrityError:  # a concurrent request created the same name
        raise BotError(f"you already have a bot named {name!r}") from None


def bot_update(bot: Bot, *, description: str, source_public: bool) -> Bot:
    bot.description = description
    bot.source_public = source_public
    bot.save(update_fields=["description", "source_public"])
    return bot


def bot_version_create(*, bot: Bot, filename: str, data: bytes, validate: bool = True) -> BotVersion:
    """Check an upload (every rule of the bot contract), store it as the bot's next version,
    and queue its validation match.

    Raises ``PackageError`` for a broken upload and ``BotError`` for bytes this bot already has.
    """
    package = BotPackage.from_bytes(filename, data, settings.BOT_UPLOAD_LIMITS)
    try:
        with transaction.atomic():
            # Lock the bot so concurrent uploads get distinct version numbers.
            Bot.objects.select_for_update().filter(pk=bot.pk).first()
            _refuse_duplicate(bot, package.sha256)
            number = (bot.versions.aggregate(n=Max("number"))["n"] or 0) + 1
            version = BotVersion.objects.create(
                bot=bot,
                number=number,
                filename=_safe_filename(package.filename),
                source=package.data,
                sha256=package.sha256,
                size=len(package.data),
            )
            if validate:  # in the same transaction: a stored version always has its plan
                import_string(settings.BOT_VERSION_VALIDATION)(version)
    except IntegrityError:
        _refuse_duplicate(bot, package.sha256)
        raise
    return version


def _safe_filename(name: str) -> str:
    """The upload's name for display: control characters (NUL breaks PostgreSQL) become '_'."""
    return re.sub(r"[\x00-\x1f\x7f]", "_", name)[-255:] or "upload"


def _refuse_duplicate(bot: Bot, sha256: str) -> None:
    existing = bot.versions.filter(sha256=sha256).first()
    if existing is not None:
        raise BotError(
            f"these exact bytes were already uploaded as version {existing.number} "
            f"(sha256 {sha256[:12]}…); change the bot before uploading again"
        )


def bot_pin_version(bot: Bot, version: BotVersion | None) -> Bot:
    """Choose the version that plays for the bot; None means the newest active one."""
    if version is not None:
        if version.bot_id != bot.pk:
            raise BotError(f"{version.label} is not a version of {bot}")
        if version.status != BotVersion.Status.ACTIVE:
            raise BotError(f"{version.label} is {version.status}; only an active version can play")
    bot.pinned_version = version
    bot.save(update_fields=["pinned_version"])
    return bot


def private_read(
    *, user, version: BotVersion, what: str, path: str, match_kind: str | None = None, match_id: int | None = None
) -> bool:
    """May ``user`` read ``version``'s private ``what`` (``SourceAccess.What``; for a seat log, in a match
    of ``match_kind``)? ``selectors.private_read_reason`` decides; a read by anyone but the owner is
    written to the audit log (``SourceAccess``) with the reason and ``path`` before it is shown."""
    reason = private_read_reason(user, version.bot, match_kind=match_kind)
    if reason is None:
        return False
    if reason != OWNER:
        SourceAccess.objects.create(
            user=user,
            username=user.get_username(),
            bot_version=version,
            label=version.label[:255],
            what=what,
            match_id=match_id,
            reason=reason[:200],
            path=path[:500],
        )
    return True


__all__ = [
    "BotError",
    "PackageError",
    "bot_create",
    "bot_pin_version",
    "bot_update",
    "bot_version_create",
    "private_read",
]
