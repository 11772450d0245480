"""Player.parameters_b in the exchange format: optional, exported, imported, never required."""

from __future__ import annotations

import io
import json

import pytest

from duels.exchange.export import exchange_export
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_everything
from duels.models import Player

pytestmark = pytest.mark.django_db


def exported() -> list[dict]:
    out = io.StringIO()
    exchange_export(querysets=exchange_everything(), out=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def imported(records: list[dict]):
    text = "".join(json.dumps(record) + "\n" for record in records)
    return exchange_import(stream=io.BytesIO(text.encode()))


def test_size_round_trips(make):
    make.player(name="small", provider="openai", model="m", parameters_b=7.5)
    records = exported()
    assert next(r for r in records if r.get("kind") == "player")["parameters_b"] == 7.5
    Player.objects.all().delete()
    imported(records)
    assert Player.objects.get(name="small").parameters_b == 7.5


def test_an_older_file_without_sizes_imports_and_keeps_a_size_set_here(make):
    make.player(name="small", provider="openai", model="m")
    records = exported()
    for record in records:
        record.pop("parameters_b", None)
    Player.objects.all().delete()
    imported(records)
    assert Player.objects.get(name="small").parameters_b is None
    Player.objects.filter(name="small").update(parameters_b=3.0)
    report = imported(records)  # re-importing the same older file is still a no-op
    assert report.created_total == 0
    assert Player.objects.get(name="small").parameters_b == 3.0


@pytest.mark.parametrize("size", [0, -2])
def test_a_size_that_is_not_positive_is_refused_with_its_line(make, size):
    make.player(name="small", provider="openai", model="m")
    records = exported()
    Player.objects.all().delete()
    records[1]["parameters_b"] = size
    with pytest.raises(ExchangeImportError) as error:
        imported(records)
    assert error.value.line == 2 and "parameters_b" in str(error.value)
