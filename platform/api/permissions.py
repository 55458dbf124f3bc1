"""Who may do what: owners manage their bots, staff organise."""

from __future__ import annotations

from rest_framework import permissions

from bots.selectors import user_is_owner_or_staff


class IsOwnerOrStaffOrReadOnly(permissions.BasePermission):
    """Everyone reads a bot; only its owner (or staff) changes it."""

    message = "only the bot's owner can do this"

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        return user_is_owner_or_staff(request.user, obj)


class IsStaff(permissions.BasePermission):
    """Organizer actions (starting a tournament, running matchmaking) are for staff."""

    message = "only organizers (staff) can do this"

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_staff)
