"""Who may do what: organizers (staff) run events (that owners manage their bots is ``bots.apis.IsOwnerOrReadOnly``)."""

from __future__ import annotations

from core.roles import is_organizer
from rest_framework import permissions


class IsStaff(permissions.BasePermission):
    """Organizer actions (starting a tournament, running matchmaking) are for staff."""

    message = "only organizers (staff) can do this"

    def has_permission(self, request, view):
        return is_organizer(request.user)
