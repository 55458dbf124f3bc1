"""The web entry point freezes its warmed-up heap after its first requests (arena.wsgi), once each
response is sent, and answers those requests like any other."""

from __future__ import annotations

import gc

import pytest


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_the_heap_is_frozen_after_the_listed_requests_once_the_response_is_closed(unfrozen):
    from arena.wsgi import FREEZE_AFTER, FrozenWarmHeap

    closed = []

    class Body(list):
        def close(self):
            closed.append(True)

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return Body([b"hello"])

    application = FrozenWarmHeap(app)
    frozen_after = []
    for number in range(1, 12):
        gc.unfreeze()
        body = application({}, lambda status, headers: None)
        assert b"".join(body) == b"hello" and gc.get_freeze_count() == 0  # not before the response is sent
        body.close()
        if gc.get_freeze_count():
            frozen_after.append(number)
    assert frozen_after == [n for n in FREEZE_AFTER if n <= 11] == [1, 10]
    assert len(closed) == 11  # the application's own close ran every time
