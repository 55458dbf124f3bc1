"""Where a bot runs: ``inprocess`` (trusted), ``process`` (bwrap + rlimits), ``docker``.

``sandbox.backends.inprocess`` and ``sandbox.backends.process`` live here; the
Docker backend is ``sandbox.docker_backend``, the one module that talks to
Docker. Each sandboxing backend offers ``start_seat(package, limits, ...)``
returning a handle for ``sandbox.seat.SandboxSeat``. Callers go through
``sandbox.runner``, never a backend directly.
"""

BACKENDS = ("inprocess", "process", "docker")
