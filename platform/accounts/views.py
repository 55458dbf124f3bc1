"""Sign up and profile pages; log in/out and password change are Django's auth views."""

from __future__ import annotations

import math

from core import ratelimit
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.shortcuts import get_object_or_404, redirect, render

from bots.selectors import bot_list

from .forms import SignUpForm


def signup(request):
    if request.user.is_authenticated:
        return redirect("accounts:profile", username=request.user.username)
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and (waiting := ratelimit.wait("signups", request)) is not None:
        minutes = max(1, math.ceil(waiting / 60))
        form.add_error(
            None, f"Too many new accounts from your address; retry in {minutes} minute{'s' if minutes != 1 else ''}."
        )
        return render(request, "accounts/signup.html", {"form": form}, status=429)
    if request.method == "POST" and form.is_valid():
        ratelimit.record("signups", request)  # accounts made count, not mistyped forms
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.username}. Create your first bot.")
        return redirect("bots:new")
    return render(request, "accounts/signup.html", {"form": form})


def profile(request, username: str):
    person = get_object_or_404(get_user_model(), username=username)
    return render(
        request,
        "accounts/profile.html",
        {"person": person, "bots": bot_list(owner=person), "is_self": request.user == person},
    )
