"""Every run of one environment and seed side by side, aligned by step, differences marked."""

from __future__ import annotations

import pytest

from duels.models import Step

pytestmark = pytest.mark.django_db


def test_every_run_of_the_seed_in_aligned_columns(owner_client, client, make):
    hint = make.hint()
    environment = hint.environment
    first = make.episode(steps=3, environment=environment, seed=4)
    second = make.episode(steps=3, environment=environment, seed=4, hint=hint)
    third = make.episode(steps=2, environment=environment, seed=4)
    make.episode(steps=3, environment=environment, seed=5)  # another seed: not shown
    Step.objects.filter(episode=second, index=2).update(action="<jump>")
    response = owner_client.get(f"/episodes/{first.uuid}/runs/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "3 runs of" in html and "first part at step 2" in html
    # Step 2 of the second run (its own action) and step 3 of the third (it has none).
    assert html.count('class="action-differs"') == 2
    assert "&lt;jump&gt;" in html and "— no step —" in html
    for run in (first, second, third):
        assert f"/episodes/{run.uuid}/" in html
    client.logout()
    assert client.get(f"/episodes/{first.uuid}/runs/").status_code == 302
