"""Names of the Celery queues; documented in docs/queues.md.

- ``matches``: one task per match (ladders, tournaments, challenges).
- ``validation``: the validation match of a newly uploaded bot version, kept
  apart so uploads are not stuck behind a long tournament round.
- ``maintenance``: periodic housekeeping (matchmaking, sweeping stuck
  matches, reaping sandbox containers, worker heartbeat).
"""

MATCHES = "matches"
VALIDATION = "validation"
MAINTENANCE = "maintenance"
ALL = (MATCHES, VALIDATION, MAINTENANCE)
