"""Any number of evaluations of a panel compared per version and seed: the filters agree with
the plays counted directly, every cell opens that evaluation's paired plays of the seed, and
the transfer figure is given only for one player before and after training."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from duels.models import Episode, Evaluation
from duels.scoring import episode_decided, episode_passed

pytestmark = pytest.mark.django_db(transaction=True)

PLAYERS = ("builtin-rookie", "builtin-cautious", "builtin-ace")


@pytest.fixture
def three(original):
    for name in PLAYERS:
        call_command("evaluate", "--panel", "original", "--player", name, "--wait",
                     "--seeds-per-environment", "2", "--environments", "3",
                     stdout=io.StringIO(), stderr=io.StringIO())
    return [Evaluation.objects.get(player__name=name) for name in PLAYERS]


def outcomes(evaluation: Evaluation) -> dict[tuple, bool | None]:
    """(version id, seed, condition) -> passed, None when not decided: counted directly."""
    entries = {entry.environment_id: entry.entry_id for entry in evaluation.panel.entries.all()}
    return {(entries[play.environment_id], play.seed, play.condition):
            episode_passed(status=play.status, success=play.success)
            if episode_decided(status=play.status, end_reason=play.end_reason) else None
            for play in Episode.objects.filter(evaluation=evaluation)}


def shown(client, url: str, query: str) -> set[tuple[str, int]]:
    data = json.loads(client.get(f"{url}?{query}&format=json").content)
    return {(version["id"], row["seed"]) for version in data["versions"]
            for row in version["seeds"]}


def test_three_evaluations_filtered_as_the_plays_say(three, client, owner):
    client.force_login(owner)
    url = f"/panels/{three[0].panel.uuid}/compare/"
    chosen = "&".join(f"e={evaluation.uuid}" for evaluation in three)
    played = [outcomes(evaluation) for evaluation in three]
    seeds = {(version, seed) for version, seed, _ in played[0]}
    assert shown(client, url, chosen) == seeds and len(seeds) == 6
    flipped = {key for key in seeds if any(
        plays.get((*key, "unhinted")) is False and plays.get((*key, "hinted")) is True
        for plays in played)}
    assert shown(client, url, f"{chosen}&show=flipped") == flipped
    regressed = {key for key in seeds if any(
        played[0].get((*key, condition)) is True
        and any(plays.get((*key, condition)) is False for plays in played[1:])
        for condition in ("unhinted", "hinted"))}
    assert shown(client, url, f"{chosen}&show=regressed") == regressed
    for index, evaluation in enumerate(three):
        alone = {key for key in seeds if any(
            [number for number, plays in enumerate(played)
             if plays.get((*key, condition)) is True] == [index]
            for condition in ("unhinted", "hinted"))}
        assert shown(client, url, f"{chosen}&show=only&only={evaluation.uuid}") == alone
    # Every cell opens that evaluation's unhinted and hinted play of the seed.
    data = json.loads(client.get(f"{url}?{chosen}&format=json").content)
    for version in data["versions"]:
        for row in version["seeds"]:
            for evaluation, cell in zip(three, row["cells"], strict=True):
                unhinted = Episode.objects.get(uuid=cell["unhinted"]["episode"])
                hinted = Episode.objects.get(uuid=cell["hinted"]["episode"])
                assert cell["compare"] == f"/compare/?a={unhinted.uuid}&b={hinted.uuid}"
                assert {unhinted.evaluation, hinted.evaluation} == {evaluation}
                assert unhinted.seed == hinted.seed == row["seed"]
                assert (unhinted.condition, hinted.condition) == ("unhinted", "hinted")
    page = client.get(f"{url}?{chosen}").content.decode()
    assert page.count('class="pair"') == 3 * 6 and "builtin-ace" in page
    assert client.get(f"{url}?{chosen}&show=nothing").status_code == 400
    assert client.get(f"{url}?{chosen}&show=only").status_code == 400


def test_the_transfer_figure_only_for_one_player_before_and_after(three, client, owner):
    client.force_login(owner)
    url = f"/panels/{three[0].panel.uuid}/compare/"
    pair = f"e={three[0].uuid}&e={three[1].uuid}"
    plain = client.get(f"{url}?{pair}").content.decode()
    assert "defined only for one player before and after training" in plain
    assert "Spearman ρ" not in plain
    assert json.loads(client.get(f"{url}?{pair}&format=json").content)["transfer"] is None
    marked = client.get(f"{url}?{pair}&checkpoints=1").content.decode()
    assert "defined only for one player" not in marked
    assert "Spearman ρ" in marked or "not enough data" in marked
    # Three evaluations: no pair, no transfer figure at all.
    data = json.loads(client.get(f"{url}?e={three[0].uuid}&e={three[1].uuid}"
                                 f"&e={three[2].uuid}&checkpoints=1&format=json").content)
    assert "transfer" not in data and len(data["evaluations"]) == 3
