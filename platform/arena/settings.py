"""Settings of Uno Arena, all from environment variables.

Without any variable set this is the embedded default for a first look:
SQLite in var/, tasks run in-process, the process sandbox. Production sets
DATABASE_URL (PostgreSQL), REDIS_URL, SECRET_KEY, DEBUG=0, ALLOWED_HOSTS and
SANDBOX_BACKEND=docker; `manage.py check --deploy` is then clean.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
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
    "validation",  # a version's validation, played as matches (above bots and matches)
    "web",
    "tournaments_app",  # label "tournaments"; the pure competition code is the top-level tournaments package
    "ladders",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
    "versiontests",
    "play",
    "axes",  # failed-login throttling (AXES_* below)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",  # the Content-Security-Policy header (CONTENT_SECURITY_POLICY below)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # last: turns a login refused by the lock into accounts.lockout's answer
    "axes.middleware.AxesMiddleware",
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
# A web request's SQL statement may run at most WEB_STATEMENT_TIMEOUT_MS (PostgreSQL's
# statement_timeout, 0: no limit), so one slow page cannot hold a server worker: the statement is
# cancelled and the page answers 500. Only the web process sets ARENA_WEB_PROCESS (arena/wsgi.py and
# arena/asgi.py, before the settings load); workers, beat and manage.py commands (migrations,
# recompute_ratings, seed_scale) run without it.
WEB_STATEMENT_TIMEOUT_MS = env_int("WEB_STATEMENT_TIMEOUT_MS", 5000)
if (
    os.environ.get("ARENA_WEB_PROCESS") == "1"
    and WEB_STATEMENT_TIMEOUT_MS > 0
    and DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
):
    _options = DATABASES["default"]["OPTIONS"]
    _options["options"] = f"{_options.get('options', '')} -c statement_timeout={WEB_STATEMENT_TIMEOUT_MS}".strip()
# Parallel test runs on one server can each name their own test database.
if os.environ.get("TEST_DATABASE_NAME"):
    DATABASES["default"]["TEST"] = {"NAME": os.environ["TEST_DATABASE_NAME"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Reverse proxies in front of the site whose X-Forwarded-For is trusted (0: none, the client's
# address is the connection's). One setting for core.clientip, DRF's NUM_PROXIES and django-axes.
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0)
if TRUSTED_PROXIES < 0:
    raise ImproperlyConfigured(f"TRUSTED_PROXIES={TRUSTED_PROXIES} must be 0 or more")

# --- failed logins (django-axes): the site's and the admin's login forms and POST /api/auth/token/.
# After LOGIN_FAILURE_LIMIT failures for one account (from anywhere) or from one client address
# (against any accounts), logins are refused for LOGIN_LOCKOUT_MINUTES after the last failure.
AUTHENTICATION_BACKENDS = [
    "accounts.backends.LoginThrottleBackend",  # first: refuses a locked login before any password check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # each on its own: the account, the address
AXES_CLIENT_IP_CALLABLE = "core.clientip.client_address"
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # failures are what is counted; successful logins are not stored
AXES_VERBOSE = False  # no start-up banner on every manage.py command (check --deploy must print only its verdict)
if AXES_FAILURE_LIMIT < 1 or AXES_COOLOFF_TIME.total_seconds() < 60:
    raise ImproperlyConfigured("LOGIN_FAILURE_LIMIT must be 1 or more and LOGIN_LOCKOUT_MINUTES 1 or more")

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
# Content-Security-Policy (django-csp), on every page in every profile: scripts, styles and
# everything else only from this site, no inline script or style anywhere (page data travels
# in <script type="application/json"> via json_script, which runs nothing), no framing.
# tests/browser/test_csp.py visits every kind of page and fails on any violation.
# Live updates over WebSockets/SSE would need "connect-src" to add the site's ws:/wss: origin.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        "base-uri": [SELF],
    },
}

# --- Celery (see arena/celery.py and docs/queues.md)
REDIS_URL = os.environ.get("REDIS_URL", "")
# The longest a match may ever be allowed. Each match's own time limit comes from its
# format and clocks (matches.selectors.match_time_limit, sent with its task); a format
# that could need more than this is refused when the match is created. Tasks sent
# without their own limits (maintenance) get it too; the broker's visibility timeout
# exceeds it, so a slow match is not delivered twice.
MATCH_TIME_LIMIT = env_int("MATCH_TIME_LIMIT", 6 * 3600)
CELERY_BROKER_URL = REDIS_URL or "memory://"
# Without a broker, tasks run in-process: the embedded default. `manage.py serve_embedded` sends
# them instead to the in-memory broker, where a worker thread of its own process plays them
# (matches.embedded) with EMBEDDED_WORKER_THREADS threads, so no request waits for a match.
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
EMBEDDED_WORKER_THREADS = env_int("EMBEDDED_WORKER_THREADS", 2)
CELERY_TASK_EAGER_PROPAGATES = True
# A task is acknowledged only after it finished: a killed worker's task is
# redelivered instead of lost, and the services make redelivery harmless.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# One match per core: only one seat of a match decides at a time and each Docker seat
# may use one core (nano_cpus), so every deciding seat has a core (docs/queues.md, "CPU").
CELERY_WORKER_CONCURRENCY = env_int("WORKER_CONCURRENCY", os.cpu_count() or 1)
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
# Every worker records that it is alive this often (matches.worker, the queue page).
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 10)
# Every worker checks itself this often (Docker engine, sandbox image, seats' folder; matches.worker)
# and stops consuming the match queues while unhealthy; a seats' folder with fewer free bytes
# than WORKER_MIN_FREE_BYTES is unhealthy (0: not checked).
WORKER_HEALTH_SECONDS = env_int("WORKER_HEALTH_SECONDS", 10)
WORKER_MIN_FREE_BYTES = env_int("WORKER_MIN_FREE_BYTES", 64 * 1024 * 1024)
CELERY_BEAT_SCHEDULE: dict = {
    # Keep every active ladder busy up to its cap of queued+running matches (ladders.services).
    "ladders-matchmake": {
        "task": "ladders.tasks.ladder_matchmake_all",
        "schedule": env_int("LADDER_MATCHMAKE_SECONDS", 30),
        "options": {"queue": queues.MAINTENANCE},
    },
    # Requeue matches whose lease expired or that ran past their deadline; resend lost messages.
    # Every worker also runs it from its own timer (matches.worker), so it needs no beat to work.
    "matches-sweep-stuck": {"task": "matches.tasks.match_sweep_stuck", "schedule": 60.0},
    # Remove sandbox containers a killed worker left behind.
    "sandbox-reap": {"task": "matches.tasks.sandbox_reap", "schedule": 600.0},
}

# --- matches (see platform/matches and docs/platform.md)
# A running match not finished after this many seconds is presumed abandoned by
# a dead worker and started again. 0 (default): each match's own hard time limit
# plus a minute (matches.selectors.match_stale_after); set, it overrides that.
MATCH_STALE_AFTER = env_int("MATCH_STALE_AFTER", 0)
# After this many starts (worker died, sandbox infrastructure failed) a match is marked failed.
MATCH_MAX_ATTEMPTS = env_int("MATCH_MAX_ATTEMPTS", 5)
# A running match's lease (database clock): renewed by its worker every MATCH_LEASE_RENEW_SECONDS;
# expired, the match is taken again by any worker; every worker sweeps for expired leases every
# MATCH_SWEEP_SECONDS (docs/queues.md, "Leases").
MATCH_LEASE_SECONDS = env_int("MATCH_LEASE_SECONDS", 12)
MATCH_LEASE_RENEW_SECONDS = env_int("MATCH_LEASE_RENEW_SECONDS", 4)
MATCH_SWEEP_SECONDS = env_int("MATCH_SWEEP_SECONDS", 5)
# A worker stores a played match's result from a thread of its own while it takes its next match
# (matches.services.ResultRecorder: one result a process at a time, under the attempt's lease);
# 0: the match's task stores it before it ends.
MATCH_RESULTS_IN_BACKGROUND = env_bool("MATCH_RESULTS_IN_BACKGROUND", True)
# The validation match of a new bot version: a short 2-seat game against a reference bot.
VALIDATION_OPPONENT = os.environ.get("VALIDATION_OPPONENT", "random")
VALIDATION_RULES = env_list("VALIDATION_RULES", ["players=2", "rounds=1"])
# A new version is validated at each of these seat counts under VALIDATION_RULES, and under the
# rules of every event its bot is entered in (validation.configurations); every configuration is played, none
# dropped: VALIDATION_MAX_CONFIGURATIONS caps how many of one version's validation matches are queued
# at once, the others wait in its plan and are queued as those pass. An event entered later queues
# the configurations the playing version has not passed, and the entry waits for them.
VALIDATION_SEATS = [int(n) for n in env_list("VALIDATION_SEATS", ["2", "4"])]
VALIDATION_MAX_CONFIGURATIONS = env_int("VALIDATION_MAX_CONFIGURATIONS", 6)

# What an uploaded bot may be (BOT_CONTRACT.md, "What is uploaded"); the contract's defaults.
_UPLOAD_ENV = {"py_bytes": "BOT_UPLOAD_PY_BYTES", "zip_bytes": "BOT_UPLOAD_ZIP_BYTES",
               "unpacked_bytes": "BOT_UPLOAD_UNPACKED_BYTES", "zip_entries": "BOT_UPLOAD_ZIP_ENTRIES",
               "binary_data_bytes": "BOT_UPLOAD_BINARY_DATA_BYTES"}
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
# Warm Docker seats of each worker process (matches.worker, docs/sandbox.md "Warm seats"): "auto"
# (the matches the process plays at once times the most seats of an active ladder, at least 2),
# a number, or 0 (off).
SANDBOX_DOCKER_WARM = os.environ.get("SANDBOX_DOCKER_WARM", "auto").strip() or "auto"
if SANDBOX_DOCKER_WARM != "auto" and not SANDBOX_DOCKER_WARM.isdigit():
    raise ImproperlyConfigured(f"SANDBOX_DOCKER_WARM={SANDBOX_DOCKER_WARM!r} is not 'auto' or a number >= 0")
# What "auto" sizes for: the most seats per match of an active ladder (the ladders app reads it;
# matches.worker calls it by this name, so matches imports no app above it).
SANDBOX_WARM_MOST_SEATS = "ladders.selectors.active_ladder_seats"
# The label of this installation's sandbox containers (the reaper touches no other's);
# empty: derived from the database's host, port and name.
SANDBOX_INSTALLATION = os.environ.get("SANDBOX_INSTALLATION", "").strip()

# --- what a stored match result does (matches.hooks): per match kind, the functions called in this
# order inside the transaction that stores the result. Every result first drops what the site's
# pages cached of it (the home page's counts, the numbers of the match's versions); then the app the
# kind belongs to folds the result in (a version's validation, a tournament's round, a ladder's
# ratings, a version test's pair; "challenge" is also the kind of the API's challenges, which that
# hook ignores).
_PAGE_CACHES_CLEAR = ["web.home.home_cache_clear", "web.bot_stats.version_stats_clear"]
MATCH_RESULT_HOOKS: dict[str, list[str]] = {
    "validation": [*_PAGE_CACHES_CLEAR, "validation.services.bot_version_validation_finish"],
    "ladder": [*_PAGE_CACHES_CLEAR, "ladders.services.ladder_match_finish"],
    "tournament": [*_PAGE_CACHES_CLEAR, "tournaments_app.services.tournament_match_finished"],
    "challenge": [*_PAGE_CACHES_CLEAR, "versiontests.services.version_test_match_finish"],
    "human": [*_PAGE_CACHES_CLEAR],
}

# --- what a match page shows of the event it was played for: per match kind, the functions (dotted
# paths) of the app that owns the kind: "event" (match -> {"kind", "name", "url", "detail"} or None)
# and "rating_changes" (match -> bot version id -> its rating change). matches.selectors calls them
# by name, so matches imports neither ladders nor tournaments.
MATCH_EVENTS: dict[str, dict[str, str]] = {
    "ladder": {"event": "ladders.selectors.match_event", "rating_changes": "ladders.selectors.match_rating_changes"},
    "tournament": {"event": "tournaments_app.selectors.match_event"},
}

# --- REST API (platform/api, docs/api.md)
# the service errors whose message is meant for the user: api.exceptions answers each with a 400
API_REFUSALS = [
    "api.services.ApiRefusal",
    "bots.services.BotError",
    "ladders.checks.LadderError",
    "matches.services.MatchError",
    "sandbox.package.PackageError",
    "tournaments_app.services.TournamentError",
]
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
    # the same rule as core.clientip.client_address (X-Forwarded-For only through trusted proxies)
    "NUM_PROXIES": TRUSTED_PROXIES,
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
# core.ratelimit: each scope per account, and per client address ("<scope>_per_address", by default
# the account's rate) so that more accounts from one address do not multiply a quota; "N/second|minute|
# hour|day". Reads are never limited.
API_THROTTLE_RATES = {
    "uploads": os.environ.get("API_RATE_UPLOADS", "30/hour"),
    "challenges": os.environ.get("API_RATE_CHALLENGES", "20/hour"),
    # human games started (the play app), per account and per address
    "human_games": os.environ.get("RATE_HUMAN_GAMES", "20/hour"),
    "login": os.environ.get("API_RATE_LOGIN", "10/minute"),
    # new accounts from one client address (the sign-up form)
    "signups": os.environ.get("SIGNUP_RATE", "3/hour"),
}
API_THROTTLE_RATES["uploads_per_address"] = os.environ.get("API_RATE_UPLOADS_PER_ADDRESS", API_THROTTLE_RATES["uploads"])
API_THROTTLE_RATES["human_games_per_address"] = os.environ.get(
    "RATE_HUMAN_GAMES_PER_ADDRESS", API_THROTTLE_RATES["human_games"]
)
API_THROTTLE_RATES["challenges_per_address"] = os.environ.get(
    "API_RATE_CHALLENGES_PER_ADDRESS", API_THROTTLE_RATES["challenges"]
)
for _scope, _rate in API_THROTTLE_RATES.items():
    if not re.fullmatch(r"[1-9][0-9]*/(s|m|h|d)[a-z]*", _rate or ""):
        raise ImproperlyConfigured(f"the {_scope} rate {_rate!r} is not N/second, N/minute, N/hour or N/day")
API_TOKENS_PER_USER = env_int("API_TOKENS_PER_USER", 20)
# A user's challenges queued or running at once.
API_CHALLENGES_PENDING = env_int("API_CHALLENGES_PENDING", 3)
# Human games (the play app) in play on the whole site at once: each holds a worker slot of the
# ``play`` queue for the whole game, so this is at most the play workers' slots (compose's
# play-worker runs this many; the embedded worker adds this many threads to its own).
HUMAN_GAMES_AT_ONCE = env_int("HUMAN_GAMES_AT_ONCE", 2)
# versiontests: an owner's running version tests (SPRT) at once, and the pairs of one test queued
# or playing at once; starting a test counts against the "challenges" rate limit.
VERSION_TESTS_RUNNING = env_int("VERSION_TESTS_RUNNING", 2)
VERSION_TEST_PAIRS_IN_FLIGHT = env_int("VERSION_TEST_PAIRS_IN_FLIGHT", 4)
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

# Who validates a new bot version (bots.services.bot_version_create calls it inside the upload's
# transaction): the validation app, above bots and matches, so bots need not import it.
BOT_VERSION_VALIDATION = "validation.services.bot_version_validate"
