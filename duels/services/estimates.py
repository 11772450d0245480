"""Store the joint model's per-environment estimates next to each analytics snapshot."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from duels.models import Environment, EnvironmentEstimate

BATCH = 2000


@transaction.atomic
def environment_estimates_store(*, irt: dict | None, computed_at: datetime,
                                training: list[dict] | None = None) -> int:
    """Replace every stored estimate by the rows of `irt["environments"]`; return how many.

    Each environment also gets its design's training row (`training`). Environments deleted
    since the data was read are skipped.
    """
    training_of = {uuid: row for row in training or () for uuid in row["environments"]}
    EnvironmentEstimate.objects.all().delete()
    rows = (irt or {}).get("environments") or []
    if not rows:
        return 0
    known = dict(Environment.objects.filter(
        uuid__in=[row["uuid"] for row in rows]).values_list("uuid", "pk"))
    known = {str(uuid): pk for uuid, pk in known.items()}
    estimates = [
        EnvironmentEstimate(
            environment_id=known[row["uuid"]],
            difficulty=row["difficulty"], difficulty_low=row["d_low"],
            difficulty_high=row["d_high"], hint_effect=row["hint_effect"],
            hint_effect_low=row["h_low"], hint_effect_high=row["h_high"],
            field_setter_score=row.get("field_setter_score"), episodes=row["n"],
            training_value=(training_of.get(row["uuid"]) or {}).get("value"),
            training=training_of.get(row["uuid"]), computed_at=computed_at,
        )
        for row in rows if row["uuid"] in known
    ]
    EnvironmentEstimate.objects.bulk_create(estimates, batch_size=BATCH)
    return len(estimates)
