"""A ladder's settings have bounds: the admin, model validation, the services and the database refuse the rest."""

from __future__ import annotations

import pytest
from core.rule_forms import rules_post_data
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from ladder_helpers import ladder, user

from ladders import checks, models, services
from ladders.demo import DEMO_LADDER
from ladders.models import Ladder

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = [
    ("deals", 1_000_000),
    ("deals", 101),
    ("deals", 0),
    ("time_per_decision", 1e300),
    ("time_per_decision", 60.5),
    ("time_per_decision", 0),
    ("time_per_decision", -1),
    ("time_per_decision", float("nan")),
    ("time_per_decision", float("inf")),
    ("time_bank", 601),
    ("time_bank", 0),
    ("time_bank", -1),
    ("time_bank", float("nan")),
    ("time_per_match", 0.5),
    ("time_per_match", 3601),
    ("time_per_match", -300),
    ("time_per_match", float("inf")),
    ("max_pending", 40_000),
    ("max_pending", 51),
    ("max_pending", 0),
    ("fault_limit", 101),
]


@pytest.mark.parametrize(("field", "value"), OUT_OF_RANGE)
def test_model_validation_refuses_out_of_range_settings_on_their_field(field, value):
    with pytest.raises(ValidationError) as error:
        ladder(**{field: value})
    assert set(error.value.message_dict) == {field}
    assert "Constraint" not in str(error.value)
    assert not Ladder.objects.exists()


def test_the_bounds_themselves_are_accepted():
    on = ladder(deals=100, time_per_decision=60, time_bank=600, time_per_match=3600, max_pending=50, fault_limit=100)
    low = ladder(
        name="Low", slug="low", deals=1, time_per_decision=0.1, time_bank=0.1, time_per_match=1,
        max_pending=1, fault_limit=1,
    )
    assert Ladder.objects.count() == 2 and on.deals == 100 and low.time_bank == 0.1 and low.time_per_match == 1


def test_the_clock_bounds_and_defaults_are_the_sandboxs():
    from sandbox.limits import CLOCK_BOUNDS, CLOCKS, DEFAULT_LIMITS

    fields = {f.name: f for f in Ladder._meta.fields}
    for clock in CLOCKS:
        low, high = CLOCK_BOUNDS[clock]
        limits = {type(v).__name__: v.limit_value for v in fields[clock].validators if hasattr(v, "limit_value")}
        assert limits == {"MinValueValidator": low, "MaxValueValidator": high}
        assert fields[clock].default == getattr(DEFAULT_LIMITS, clock)
    assert Ladder().time_per_match == 300.0 and Ladder().allow_same_owner is False


def test_games_per_match_are_bounded_as_tournaments_bound_games_per_pairing():
    from tournaments_app.services import MAX_DEALS

    assert models.MAX_DEALS == MAX_DEALS


def test_the_demo_ladder_is_within_the_bounds():
    Ladder(**DEMO_LADDER).full_clean()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("deals", 101), ("time_per_decision", 0), ("time_bank", 1e300), ("time_per_match", 0.5),
        ("time_per_match", 4000), ("max_pending", 51), ("fault_limit", 0),
    ],
)
def test_the_database_refuses_what_skips_validation(field, value):
    on = ladder()
    with pytest.raises(IntegrityError, match=f"ladder_{field}_range"), transaction.atomic():
        Ladder.objects.filter(pk=on.pk).update(**{field: value})


def _admin_client(client):
    admin = user("boss")
    admin.is_staff = admin.is_superuser = True
    admin.save()
    client.force_login(admin)
    return client


def _admin_form(**changes) -> dict:
    form = {
        "name": "Big", "slug": "big", **rules_post_data(exclude=("players",)), "seats": 2, "deals": 1,
        "duplicate": "on", "time_per_decision": 1, "time_bank": 10, "time_per_match": 300, "max_pending": 4,
        "fault_limit": 3, "active": "on", "entries-TOTAL_FORMS": 0, "entries-INITIAL_FORMS": 0,
    }
    form.update(changes)
    return form


def test_the_admin_refuses_the_reviewers_values_on_each_field(client):
    client = _admin_client(client)
    response = client.post(
        reverse("admin:ladders_ladder_add"),
        _admin_form(deals=1000000, time_per_decision="1e300", max_pending=40000, time_bank=0, time_per_match=0.5),
    )
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {"deals", "time_per_decision", "time_bank", "time_per_match", "max_pending"}
    assert "greater than or equal to 1" in errors["time_per_match"][0]
    assert "less than or equal to 100" in errors["deals"][0]
    assert "less than or equal to 60" in errors["time_per_decision"][0]
    assert "greater than or equal to 0.1" in errors["time_bank"][0]
    assert "less than or equal to 50" in errors["max_pending"][0]
    assert "is violated" not in response.content.decode()
    assert not Ladder.objects.exists()


@pytest.mark.parametrize("field", ["time_per_decision", "time_per_match"])
@pytest.mark.parametrize("value", ["0", "-1"])
def test_the_admin_reports_a_non_positive_time_on_its_field_not_as_a_constraint(client, field, value):
    client = _admin_client(client)
    response = client.post(reverse("admin:ladders_ladder_add"), _admin_form(**{field: value}))
    assert response.status_code == 200
    errors = response.context["adminform"].form.errors
    assert set(errors) == {field}
    assert "is violated" not in response.content.decode()
    assert client.post(reverse("admin:ladders_ladder_add"), _admin_form()).status_code == 302


def test_the_admin_refuses_out_of_range_values_when_editing_too(client):
    client = _admin_client(client)
    on = ladder()
    form = _admin_form(name=on.name, slug=on.slug, deals=101)
    response = client.post(reverse("admin:ladders_ladder_change", args=[on.pk]), form)
    assert response.status_code == 200 and set(response.context["adminform"].form.errors) == {"deals"}
    on.refresh_from_db()
    assert on.deals == 1


def test_the_match_format_refuses_settings_out_of_bounds_naming_the_field():
    on = ladder()
    assert checks.ladder_match_format(on) == {
        "deals": 1, "duplicate": True, "time_per_decision": 1.0, "time_bank": 10.0, "time_per_match": 300.0,
    }
    on.deals = 1_000_000  # as a row written around validation would hold
    with pytest.raises(services.LadderError, match="deals: Ensure this value is less than or equal to 100"):
        checks.ladder_match_format(on)
    on.deals, on.time_per_match = 1, 1e9
    with pytest.raises(services.LadderError, match="time_per_match: Ensure this value is less than or equal to 3600"):
        checks.ladder_match_format(on)



def test_a_format_whose_matches_could_outlast_the_longest_match_allowed_is_refused_on_time_per_match(settings):
    # 10 seats x 3600 s of thinking each is 10 hours before a single card is dealt.
    with pytest.raises(ValidationError) as error:
        ladder(seats=10, rules={"players": 10}, deals=1, time_per_match=3600)
    assert set(error.value.message_dict) == {"time_per_match"}
    message = error.value.message_dict["time_per_match"][0]
    assert "could need" in message and "MATCH_TIME_LIMIT=21600 s" in message and "fewer deals" in message
    assert not Ladder.objects.exists()
    ladder(seats=10, rules={"players": 10}, deals=1, time_per_match=300)  # 10 x 300 s fits
    settings.MATCH_TIME_LIMIT = 600  # the limit is the setting's, read when the ladder is saved
    with pytest.raises(ValidationError, match="MATCH_TIME_LIMIT=600 s"):
        ladder(name="Short", slug="short", time_per_match=300)
