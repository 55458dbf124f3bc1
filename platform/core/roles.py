"""The site's roles, in one place (docs/platform.md, "Roles").

- **owner**: the user who created a bot; the only one who uploads into it, edits, renames,
  pins or changes the visibility of it, on the pages and in the API.
- **organizer**: a staff user (``is_staff``) who is not a superuser. Runs events in the admin and
  the API (tournaments, ladders, their matches, withdrawals and disqualifications) and reads the
  private source and logs of entrants only (``bots.selectors.private_read_reason``), each read
  written to the audit log (``bots.models.SourceAccess``).
- **superuser**: administers the site, users and groups included (only superusers do).
"""

from __future__ import annotations


def is_organizer(user) -> bool:
    """Staff run events; superusers are staff too."""
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_staff)


def is_superuser(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_active and user.is_superuser)
