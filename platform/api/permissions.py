"""Who may do what: owners manage their bots, organizers (staff) run events."""

from __future__ import annotations

from core.roles import is_organizer
from rest_framework import permissions

from bots.selectors import user_is_owner


class IsOwnerOrReadOnly(permissions.BasePermission):
    """Everyone reads a bot; only its owner changes it (not organizers, not superusers)."""

    message = "only the bot's owner can do this"

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        return user_is_owner(request.user, obj)


class IsStaff(permissions.BasePermission):
    """Organizer actions (starting a tournament, running matchmaking) are for staff."""

    message = "only organizers (staff) can do this"

    def has_permission(self, request, view):
        return is_organizer(request.user)
