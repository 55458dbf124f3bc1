"""Settings of Uno Arena, all from environment variables.

Without any variable set this is the embedded default for a first look:
SQLite in var/, tasks run in-process, the process sandbox. Production sets
DATABASE_URL (PostgreSQL), REDIS_URL, SECRET_KEY, DEBUG=0, ALLOWED_HOSTS and
SANDBOX_BACKEND=docker; `manage.py check --deploy` is then clean.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from sandbox.limits import UploadLimits

from . import queues
from .env import database_from_url, env_bool, env_int, env_list

BASE_DIR = Path(__file__).resolve().parent.parent.parent  # the project root
PLATFORM_DIR = BASE_DIR / "platform"
VAR_DIR = Path(os.environ.get("ARENA_VAR_DIR", BASE_DIR / "var"))

DEBUG = env_bool("DEBUG", True)

_DEV_SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production-0123456789abcdefghij"
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
    SECRET_KEY = _DEV_SECRET_KEY

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # first: its templates (admin/base_site.html, 404.html, 500.html) override the defaults
    "core",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "accounts",
    "bots",
    "matches",
    "web",
    "tournaments",
    "ladders",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "arena.urls"
WSGI_APPLICATION = "arena.wsgi.application"
ASGI_APPLICATION = "arena.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database: PostgreSQL through psycopg 3 in production, SQLite by default
DATABASE_URL = os.environ.get("DATABASE_URL", "")
DATABASES = {
    "default": database_from_url(DATABASE_URL or f"sqlite:///{VAR_DIR / 'arena.sqlite3'}", BASE_DIR)
}
if not DATABASE_URL:
    # The embedded default keeps its database in var/; make sure the folder exists.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
# Parallel test runs on one server can each name their own test database.
if os.environ.get("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# Uploads are read into memory up to the largest allowed bot (5 MiB zip) plus form overhead.
DATA_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 8 * 1024 * 1024

# --- production profile: on whenever DEBUG is off
if not DEBUG:
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    if not SECURE_HSTS_PRELOAD:  # an operator's explicit choice, not an oversight
        SILENCED_SYSTEM_CHECKS = ["security.W021"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    if env_bool("SECURE_PROXY_SSL_HEADER", False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    if not ALLOWED_HOSTS:
        raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off")
X_FRAME_OPTIONS = "DENY"

# --- Celery (see arena/celery.py and docs/queues.md)
REDIS_URL = os.environ.get("REDIS_URL", "")
# The longest a match may run before its task is killed; the broker's
# visibility timeout must exceed it, or a slow match would be delivered twice.
MATCH_TIME_LIMIT = env_int("MATCH_TIME_LIMIT", 30 * 60)
CELERY_BROKER_URL = REDIS_URL or "memory://"
# Without a broker, tasks run in-process: the embedded default.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged only after it finished: a killed worker's task is
# redelivered instead of lost, and the services make redelivery harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_DEFAULT_QUEUE = queues.MAINTENANCE
CELERY_TASK_QUEUES = [Queue(name) for name in queues.ALL]
CELERY_TASK_SOFT_TIME_LIMIT = MATCH_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = MATCH_TIME_LIMIT + 60
CELERY_BROKER_TRANSPORT_OPTIONS = {
    # Longer than the longest match, so a running match is not handed to a
    # second worker while the first still plays it; after it, an unacknowledged
    # task of a dead worker is delivered again.
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT + 120),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = True
CELERY_TIMEZONE = "UTC"
CELERY_TASK_ROUTES = {
    "matches.tasks.match_play": {"queue": queues.MATCHES},
    "matches.tasks.match_sweep_stuck": {"queue": queues.MAINTENANCE},
    "matches.tasks.sandbox_reap": {"queue": queues.MAINTENANCE},
    # Validation matches go to queues.VALIDATION: matches.services.match_enqueue names it.
}
# Every worker records that it is alive this often (core.worker, the queue page).
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 30)
CELERY_BEAT_SCHEDULE: dict = {
    # Keep every active ladder busy up to its cap of queued+running matches (ladders.services).
    "ladders-matchmake": {
        "task": "ladders.tasks.ladder_matchmake_all",
        "schedule": env_int("LADDER_MATCHMAKE_SECONDS", 30),
        "options": {"queue": queues.MAINTENANCE},
    },
    # Requeue matches whose worker died (running past their deadline).
    "matches-sweep-stuck": {"task": "matches.tasks.match_sweep_stuck", "schedule": 60.0},
    # Remove sandbox containers a killed worker left behind.
    "sandbox-reap": {"task": "matches.tasks.sandbox_reap", "schedule": 600.0},
}

# --- matches (see platform/matches and docs/platform.md)
# A running match not finished after this many seconds is presumed abandoned by
# a dead worker and started again; it must exceed the hard task time limit.
MATCH_STALE_AFTER = env_int("MATCH_STALE_AFTER", CELERY_TASK_TIME_LIMIT + 60)
# After this many starts (worker died, sandbox infrastructure failed) a match is marked failed.
MATCH_MAX_ATTEMPTS = env_int("MATCH_MAX_ATTEMPTS", 5)
# The validation match of a new bot version: a short 2-seat game against a reference bot.
VALIDATION_OPPONENT = os.environ.get("VALIDATION_OPPONENT", "random")
VALIDATION_RULES = env_list("VALIDATION_RULES", ["players=2", "rounds=1"])

# What an uploaded bot may be (BOT_CONTRACT.md, "What is uploaded"); the contract's defaults.
_UPLOAD_ENV = {"py_bytes": "BOT_UPLOAD_PY_BYTES", "zip_bytes": "BOT_UPLOAD_ZIP_BYTES",
               "unpacked_bytes": "BOT_UPLOAD_UNPACKED_BYTES", "zip_entries": "BOT_UPLOAD_ZIP_ENTRIES"}
try:
    BOT_UPLOAD_LIMITS = UploadLimits(
        **{field: env_int(name, getattr(UploadLimits, field)) for field, name in _UPLOAD_ENV.items()}
    )
except ValueError as exc:
    raise ImproperlyConfigured(f"{exc} (set by {', '.join(_UPLOAD_ENV.values())})") from None

# --- sandbox: where untrusted bots run (see sandbox/ and docs/sandbox.md)
SANDBOX_BACKEND = os.environ.get("SANDBOX_BACKEND", "auto")
if SANDBOX_BACKEND not in ("auto", "docker", "process"):
    raise ImproperlyConfigured(
        f"SANDBOX_BACKEND={SANDBOX_BACKEND!r} is not one of: auto, docker, process"
    )
SANDBOX_IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")
# The process sandbox is weaker than Docker: production must opt in to it explicitly.
SANDBOX_ALLOW_PROCESS = env_bool("SANDBOX_ALLOW_PROCESS", DEBUG)

# --- REST API (platform/api, docs/api.md)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Uno Arena API",
    "DESCRIPTION": "Bots, versions, matches, replays, ladders, tournaments and challenges. See docs/api.md.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # api.urls' <id:...> path parameter: an integer of at most 18 digits.
    "PATH_CONVERTER_OVERRIDES": {"id": {"type": "integer", "minimum": 0, "maximum": 999999999999999999}},
}
# Per user (or address when anonymous): "N/second|minute|hour|day". Reads are never limited.
API_THROTTLE_RATES = {
    "uploads": os.environ.get("API_RATE_UPLOADS", "30/hour"),
    "challenges": os.environ.get("API_RATE_CHALLENGES", "20/hour"),
    "login": os.environ.get("API_RATE_LOGIN", "10/minute"),
}
API_TOKENS_PER_USER = env_int("API_TOKENS_PER_USER", 20)
# A user's challenges queued or running at once.
API_CHALLENGES_PENDING = env_int("API_CHALLENGES_PENDING", 3)
# Rate-limit counters live in the cache: processes share them only through a shared cache
# (CACHE_URL=redis://...); without it each process counts on its own.
if os.environ.get("CACHE_URL"):
    CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": os.environ["CACHE_URL"]}
    }

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
