"""Selectors of the API app (functions that read): the personal access tokens."""

from __future__ import annotations

from django.db.models import QuerySet

from .models import ApiToken


def token_list(user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-pk")
