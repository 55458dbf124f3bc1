"""Site-wide pages."""

from django.shortcuts import render

from bots.selectors import site_counts
from matches.selectors import match_list


def home(request):
    return render(
        request,
        "core/home.html",
        {"counts": site_counts(), "recent": match_list(limit=8)},
    )
