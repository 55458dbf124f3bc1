"""Failed-login throttling: django-axes' backend, configured in settings (``AXES_*``)."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend


class LoginThrottleBackend(AxesStandaloneBackend):
    """Refuses logins to a locked account or from a locked address (axes counts the failures).

    Every login over the web passes its request (the site's and the admin's login forms, the API's
    token endpoint); a call without one (``Client.login`` in tests, a shell) has no client address
    to count by, so it is not throttled here instead of raising.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
