"""The bot pages: thin views over services and selectors.

Moved from bots.views (issue 15 point 1): a bot's and a version's pages show their matches, their
validation and their ratings, so they are site pages above every app they read; their URL names stay
in the ``bots`` namespace (web/bot_urls.py)."""

from __future__ import annotations

import math

from core import ratelimit
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from bots import selectors, services
from bots.forms import BotEditForm, BotForm, CappedUploadHandler, UploadForm
from bots.models import Bot, BotVersion, SourceAccess
from matches.selectors import any_in_play, match_list
from sandbox.package import PackageError
from validation import selectors as validation_selectors
from validation import services as validation_services

from . import bot_stats

#: bots per page of the bot list
BOTS_PER_PAGE = 50
#: matches a bot's page and a version's page list (each links the whole list, /matches/?bot= and ?version=)
RECENT_MATCHES = 20
#: the longest search text the bot list takes (names are at most 64, usernames 150)
BOT_SEARCH_MAX = 150


def bot_list(request):
    """Every bot by name, a page at a time; ``?q=`` finds bots by name or owner."""
    search = request.GET.get("q", "").strip()[:BOT_SEARCH_MAX]
    page = Paginator(selectors.bot_list(search=search), BOTS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "bots/bot_list.html", {"bots": page.object_list, "page": page, "search": search})


@login_required
def bot_new(request):
    form = BotForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            bot = services.bot_create(owner=request.user, **form.cleaned_data)
        except services.BotError as exc:
            form.add_error("name", str(exc))
        else:
            messages.success(request, f"Bot {bot.name} created. Upload its first version.")
            return redirect("bots:upload", bot_id=bot.pk)
    return render(request, "bots/bot_form.html", {"form": form})


def _owned_bot(request, bot_id: int) -> Bot:
    """The bot when the request's user owns it: nobody else (organizers and superusers included)
    uploads into, edits, pins or revalidates it here; superusers may in the admin."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    if not selectors.user_is_owner(request.user, bot):
        raise Http404("not your bot")
    return bot


@login_required
def bot_edit(request, bot_id: int):
    bot = _owned_bot(request, bot_id)
    form = BotEditForm(request.POST or None, instance=bot)
    if request.method == "POST" and form.is_valid():
        services.bot_update(bot, **form.cleaned_data)
        messages.success(request, "Saved.")
        return redirect(bot)
    return render(request, "bots/bot_form.html", {"form": form, "bot": bot})


def bot_detail(request, bot_id: int):
    bot = get_object_or_404(Bot.objects.select_related("owner"), pk=bot_id)
    is_owner = selectors.user_is_owner(request.user, bot)
    versions = list(selectors.bot_versions(bot))
    results = bot_stats.bot_version_results(bot, versions)
    for version in versions:
        version.results = results.get(version.pk)
    return render(
        request,
        "bots/bot_detail.html",
        {
            "bot": bot,
            "versions": versions,
            "playing": selectors.playing_among(bot, versions),
            "latest": versions[0] if versions else None,
            "is_owner": is_owner,
            "can_view_source": selectors.can_view_source(request.user, bot),
            "matches": (matches := match_list(bot=bot, limit=RECENT_MATCHES)),
            "in_play": any_in_play(matches),
            "upload_form": UploadForm() if is_owner else None,
            "stats_window": bot_stats.STATS_WINDOW,
        },
    )


@csrf_exempt
def bot_upload(request, bot_id: int):
    # The upload handler must be set before anything reads the body, CSRF
    # middleware included; the CSRF check runs right after, in the inner view.
    request.upload_handlers = [CappedUploadHandler(request)]
    return _bot_upload(request, bot_id)


@csrf_protect
@login_required
def _bot_upload(request, bot_id: int):
    bot = _owned_bot(request, bot_id)
    form = UploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and (waiting := ratelimit.hit("uploads", request)) is not None:
        # the API's upload quota, per account and per address (core.ratelimit)
        form.add_error(
            None, f"Too many uploads; retry in {max(1, math.ceil(waiting))} s (the limit counts your account and "
            "your address)."
        )
        return render(request, "bots/upload.html", {"bot": bot, "form": form}, status=429)
    if request.method == "POST" and form.is_valid():
        filename, data = form.upload()
        try:
            version = services.bot_version_create(bot=bot, filename=filename, data=data)
        except (PackageError, services.BotError) as exc:
            form.add_error("file", str(exc))
        else:
            version.refresh_from_db()
            if version.status == BotVersion.Status.REJECTED:
                messages.error(request, f"Version {version.number} was rejected by validation: {version.rejection_reason}")
            elif version.status == BotVersion.Status.ACTIVE:
                messages.success(request, f"Version {version.number} passed validation and is active.")
            else:
                messages.info(request, f"Version {version.number} uploaded; its validation match is queued.")
            return redirect(version)
    return render(request, "bots/upload.html", {"bot": bot, "form": form})


@login_required
@require_POST
def bot_pin(request, bot_id: int):
    bot = _owned_bot(request, bot_id)
    number = request.POST.get("version", "")
    version = None
    if number:
        version = get_object_or_404(BotVersion, bot=bot, number=number) if number.isdigit() else None
        if version is None:
            raise Http404(f"no version {number!r}")
    try:
        services.bot_pin_version(bot, version)
    except services.BotError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(
            request, f"Version {version.number} plays from now on." if version else "The newest active version plays."
        )
    return redirect(bot)


def version_detail(request, bot_id: int, number: int):
    version = get_object_or_404(
        BotVersion.objects.defer("source").select_related("bot__owner"), bot_id=bot_id, number=number
    )
    bot = version.bot
    can_view_log = services.private_read(
        user=request.user, version=version, what=SourceAccess.What.VALIDATION_LOG, path=request.get_full_path()
    )
    return render(
        request,
        "bots/version_detail.html",
        {
            "bot": bot,
            "version": version,
            "is_owner": selectors.user_is_owner(request.user, bot),
            "can_view_log": can_view_log,
            "can_view_source": selectors.can_view_source(request.user, bot),
            # which version plays (the page says whether this one does): never its upload's bytes
            "playing": selectors.bot_playing_versions([bot], only=()).get(bot.pk),
            "matches": match_list(version=version, limit=RECENT_MATCHES),
            "can_revalidate": validation_selectors.can_revalidate(version),
            "stats": bot_stats.version_stats(version),
            # runs added for an event entered since the validation, that failed: the summary names them
            "failed_added": [r for r in version.validation_runs or [] if r.get("added") and r["status"] == "failed"],
        },
    )


@login_required
@require_POST
def version_revalidate(request, bot_id: int, number: int):
    bot = _owned_bot(request, bot_id)
    version = get_object_or_404(BotVersion.objects.defer("source"), bot=bot, number=number)
    try:
        validation_services.bot_version_revalidate(version)
    except services.BotError as exc:
        messages.error(request, str(exc))
    else:
        messages.info(request, f"Version {version.number} is being validated again.")
    return redirect(version)


def version_source(request, bot_id: int, number: int):
    version = get_object_or_404(BotVersion.objects.select_related("bot__owner"), bot_id=bot_id, number=number)
    if not version.bot.source_public and not services.private_read(
        user=request.user, version=version, what=SourceAccess.What.SOURCE, path=request.get_full_path()
    ):
        raise Http404("the source of this bot is private")
    is_zip = version.filename.lower().endswith(".zip")
    response = HttpResponse(
        bytes(version.source),
        content_type="application/zip" if is_zip else "text/plain; charset=utf-8",
    )
    response["Content-Disposition"] = content_disposition_header(
        is_zip, f"{version.bot.name}-v{version.number}-{version.filename}"
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response
