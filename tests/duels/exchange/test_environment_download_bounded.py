"""The environments download streams a few rows at a time: 240 environments of a 64 KiB source
and a 100 KiB validation report (38.5 MiB) download with a peak of about 15 MiB (49 MiB when
250 rows were fetched at once)."""

from __future__ import annotations

import tracemalloc

import pytest

from duels.models import Environment

pytestmark = pytest.mark.django_db

COUNT = 240
SOURCE = "class Environment:\n    pass\n" + "#" * (64 * 1024 - 40) + "\n"


def test_the_environments_download_holds_a_few_rows_at_a_time(client, owner):
    Environment.objects.bulk_create(
        Environment(title=f"E{number}", source=SOURCE + f"# {number}\n", status="valid",
                    validation={"valid": True, "notes": "x" * (100 * 1024)})
        for number in range(COUNT))
    client.force_login(owner)
    tracemalloc.start()
    try:
        response = client.get("/export/environments.jsonl")
        size = sum(len(chunk) for chunk in response.streaming_content)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > COUNT * 164 * 1024
    assert peak < size / 2, f"peak {peak / 2**20:.1f} MiB for {size / 2**20:.1f} MiB"
