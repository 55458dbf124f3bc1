"""Pages of version tests: thin views over the services and selectors."""

from __future__ import annotations

import math

from core import ratelimit
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from bots.models import BotVersion
from ladders.models import Ladder

from . import selectors, services
from .forms import VersionTestForm
from .models import VersionTest

MATCHES_PER_PAGE = 25
#: starting a test asks for unrated matches, as a challenge does: the same per-account and
#: per-address rate (API_RATE_CHALLENGES, API_RATE_CHALLENGES_PER_ADDRESS)
RATE_SCOPE = "challenges"


def _visible_test(request, pk: int) -> VersionTest:
    try:
        test = selectors.version_test_get(pk)
    except VersionTest.DoesNotExist:
        raise Http404("no such version test") from None
    if not selectors.can_view(request.user, test):
        raise Http404("no such version test")  # others do not learn that it exists
    return test


@login_required
def test_list(request):
    page = Paginator(selectors.version_test_list(request.user), 25).get_page(request.GET.get("page"))
    return render(request, "versiontests/test_list.html", {"tests": page.object_list, "page": page})


@login_required
def test_new(request):
    initial = {}
    if request.GET.get("new", "").isdigit():
        initial["new_version"] = int(request.GET["new"][:18])
    form = VersionTestForm(request.POST or None, user=request.user, initial=initial)
    if request.method == "POST" and form.is_valid():
        test = _start(request, form)
        if test is not None:
            messages.success(request, f"Version test started: {test.new_version.label} against {test.old_version.label}.")
            return redirect(test)
    return render(request, "versiontests/test_new.html", {"form": form})


def _start(request, form: VersionTestForm) -> VersionTest | None:
    data = form.cleaned_data
    new = BotVersion.objects.select_related("bot").filter(pk=data["new_version"]).first()
    old = BotVersion.objects.select_related("bot").filter(pk=data["old_version"]).first()
    ladder = Ladder.objects.filter(slug=data["ladder"]).first()
    for field, found in (("new_version", new), ("old_version", old), ("ladder", ladder)):
        if found is None:
            form.add_error(field, "No such choice: pick one from the list.")
    if form.errors:
        return None
    waiting = ratelimit.wait(RATE_SCOPE, request)
    if waiting is not None:
        form.add_error(None, f"Too many requests for matches; retry in {max(1, math.ceil(waiting))} s "
                             "(the limit counts your account and your address).")
        return None
    try:
        test = services.version_test_start(
            owner=request.user, new_version=new, old_version=old, ladder=ladder,
            elo0=data["elo0"], elo1=data["elo1"], alpha=data["alpha"], beta=data["beta"],
            max_pairs=data["max_pairs"], seed=data["seed"],
        )
    except services.VersionTestError as exc:
        form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        return None
    ratelimit.record(RATE_SCOPE, request)
    return test


@login_required
def test_detail(request, pk: int):
    test = _visible_test(request, pk)
    page = Paginator(selectors.version_test_matches(test), MATCHES_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "versiontests/test_detail.html",
        {
            "test": test,
            "status": selectors.version_test_status(test),
            "matches": page.object_list,
            "page": page,
            "is_owner": request.user.pk == test.owner_id,
        },
    )


@never_cache
def test_live(request, pk: int):
    """The live numbers of a test (its page polls them): 404 for whoever may not see the test."""
    test = _visible_test(request, pk)
    return JsonResponse(selectors.version_test_status(test))


@login_required
@require_POST
def test_cancel(request, pk: int):
    test = get_object_or_404(VersionTest, pk=pk)
    if test.owner_id != request.user.pk:
        raise Http404("no such version test")
    try:
        services.version_test_cancel(test, user=request.user)
    except services.VersionTestError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Version test cancelled: its queued pairs will not play.")
    return redirect(test)
