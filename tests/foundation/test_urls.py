"""Every page that takes an id answers an absurd one with a 404, never a 500."""

import pytest

HUGE = "9" * 25  # does not fit a 64-bit database column


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url",
    [
        f"/bots/{HUGE}/",
        f"/matches/{HUGE}/",
        f"/matches/{HUGE}/replay.json",
        f"/matches/{HUGE}/replay/",
        f"/live/matches/{HUGE}.json",
        f"/live/bots/{HUGE}/v1.json",
        f"/live/bots/1/v{HUGE}.json",
        f"/ladders/reference/bots/{HUGE}/",
        f"/api/matches/{HUGE}/",
    ],
)
def test_an_id_too_large_for_the_database_is_a_404(client, url):
    assert client.get(url).status_code == 404


@pytest.mark.django_db
def test_a_normal_missing_id_is_still_a_404(client):
    assert client.get("/bots/123456/").status_code == 404
