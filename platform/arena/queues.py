"""Names of the Celery queues; documented in docs/queues.md.

- ``matches``: one task per match (ladders, tournaments, challenges).
- ``validation``: the validation match of a newly uploaded bot version, kept
  apart so uploads are not stuck behind a long tournament round.
- ``play``: human games (the play app): a person waits at the table, so they never queue behind
  ladder or tournament matches; each holds its worker slot for the whole game.
- ``maintenance``: periodic housekeeping (matchmaking, sweeping stuck
  matches, reaping sandbox containers, worker heartbeat).
"""

MATCHES = "matches"
VALIDATION = "validation"
PLAY = "play"
MAINTENANCE = "maintenance"
ALL = (MATCHES, VALIDATION, PLAY, MAINTENANCE)
#: what a worker of matches serves: every queue but ``play``, whose workers keep their slots for
#: human games (a person's game holds its slot for minutes: docs/queues.md)
MATCH_WORK = (MATCHES, VALIDATION, MAINTENANCE)
