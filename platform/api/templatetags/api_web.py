"""Sections other apps' pages include: API tokens on the profile page."""

from __future__ import annotations

from django import template

from .. import selectors

register = template.Library()


@register.inclusion_tag("api/_tokens.html", takes_context=True)
def api_tokens(context):
    """The signed-in user's tokens with revoke buttons, and the form for a new one."""
    request = context["request"]
    return {"tokens": list(selectors.token_list(request.user)), "csrf_token": context.get("csrf_token")}
