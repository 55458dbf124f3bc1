"""WSGI entry point (gunicorn arena.wsgi)."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
# the web process: its SQL statements get WEB_STATEMENT_TIMEOUT_MS (settings); set before the settings load
os.environ.setdefault("ARENA_WEB_PROCESS", "1")

#: requests after which a web process moves what it holds for good out of the collector's sight
FREEZE_AFTER = (1, 10, 100, 1000)


class FrozenWarmHeap:
    """The WSGI application, with the collector told to leave the warmed-up heap alone.

    A web process holds about 150,000 long-lived objects once its pages have run (modules, URL
    patterns, compiled templates); every full collection walked them all: 120-150 ms a pause, three
    in 185 requests, which made the slowest requests of a page (measured on arena_scale). After
    the requests of FREEZE_AFTER, once the response is sent, the process collects and freezes
    what is alive (``gc.freeze``): those objects are never scanned again, and the full collections
    of the requests' own objects took 38-48 ms at most. The few objects frozen that later die stay
    in memory; that is bounded by the four freezes."""

    def __init__(self, application) -> None:
        self.application = application
        self.requests = 0

    def __call__(self, environ, start_response):
        self.requests += 1
        response = self.application(environ, start_response)
        return _ThenFreeze(response) if self.requests in FREEZE_AFTER else response


class _ThenFreeze:
    """A response body that collects and freezes the heap when the server closes it (once sent)."""

    def __init__(self, response) -> None:
        self.response = response

    def __iter__(self):
        return iter(self.response)

    def close(self) -> None:
        try:
            if hasattr(self.response, "close"):
                self.response.close()
        finally:
            gc.collect()
            gc.freeze()


application = FrozenWarmHeap(get_wsgi_application())
