"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
# the web process: its SQL statements get WEB_STATEMENT_TIMEOUT_MS (settings); set before the settings load
os.environ.setdefault("ARENA_WEB_PROCESS", "1")
application = get_asgi_application()
