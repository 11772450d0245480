"""Numbers a column cannot hold are an error naming their line, never a 500 (issue 25)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.models import Annotation, Player
from tests.duels.exchange.test_import_trust import environment_note, player_record

pytestmark = pytest.mark.django_db


def file_text(*records: dict) -> bytes:
    lines = [{"format": "envduels.v1"}, *records]
    return "".join(json.dumps(record) + "\n" for record in lines).encode()


def ranged_note(environment_uuid: str, **fields) -> dict:
    note = environment_note(environment_uuid, author="reviewer")
    note.update(fields)
    return note


@pytest.mark.parametrize("fields", [
    {"line_start": 2**70, "line_end": 2**70 + 1},
    {"line_start": 1, "line_end": 2**31},
    {"line_start": -(2**40), "line_end": 3},
])
def test_an_out_of_range_line_number_names_its_line(make, fields):
    environment = make.environment()
    text = file_text(ranged_note(str(environment.uuid)), ranged_note(str(environment.uuid),
                                                                   **fields))
    with pytest.raises(ExchangeImportError, match=r"^line 3: field 'line_\w+' is out of range"):
        exchange_import(stream=io.BytesIO(text))
    assert not Annotation.objects.exists()  # nothing half-written


def test_a_number_too_large_for_a_float_names_its_line():
    text = file_text(player_record(base_url="", api_key_env="", price_in=10**400))
    with pytest.raises(ExchangeImportError, match=r"^line 2: field 'price_in' is out of range"):
        exchange_import(stream=io.BytesIO(text))
    assert not Player.objects.filter(name="foreign").exists()


def test_the_import_page_answers_400_with_the_line(client, staff, make):
    environment = make.environment()
    client.force_login(staff)
    upload = SimpleUploadedFile("notes.jsonl", file_text(
        ranged_note(str(environment.uuid), line_start=2**70, line_end=2**70)))
    response = client.post("/import/", {"file": upload})
    assert response.status_code == 400
    assert "line 2: field &#x27;line_start&#x27; is out of range" in response.text
    assert "nothing was imported" in response.text
