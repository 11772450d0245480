"""An older study's export: environments without a validation report (`"validation": null`), no
forfeit fields, no model sizes. It imports, and the analytics rate it exactly as its stated
outcomes say (never as draws because nothing was validated here)."""

from __future__ import annotations

import io
import json
import uuid
from itertools import combinations

import pytest
from django.core.management import call_command

from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.models import Duel, Environment, EnvironmentStatus

pytestmark = pytest.mark.django_db

NAMES = ["alpha", "beta", "gamma", "delta"]
WHEN = "2024-05-01T12:00:00+00:00"


def _id() -> str:
    return str(uuid.uuid4())


def older_study(attempts: int = 3) -> tuple[str, dict[str, str]]:
    """A round robin where the earlier-named player always wins; returns (file, outcomes)."""
    lines = [{"format": "envduels.v1"}]
    players = {name: _id() for name in NAMES}
    for name, player_uuid in players.items():
        lines.append({"kind": "player", "uuid": player_uuid, "name": name, "provider": "openai",
                      "model": f"{name}-model", "base_url": "", "api_key_env": "", "params": {},
                      "price_in": 0.0, "price_out": 0.0, "builtin": False})
    environments, duels, episodes, outcomes = [], [], [], {}
    for a, b in combinations(NAMES, 2):
        duel_uuid = _id()
        record = {"kind": "duel", "uuid": duel_uuid, "tournament": None, "a": players[a],
                  "b": players[b], "attempts": attempts, "observe": False,
                  "status": "finished", "outcome": "a", "created_at": WHEN, "finished_at": WHEN}
        # A's environment needs its hint (s = 1); B's is solved either way (s = 0).
        for side, setter, solver, unhinted, hinted in (("a", a, b, False, True),
                                                       ("b", b, a, True, True)):
            env_uuid, hint_uuid = _id(), _id()
            environments.append({"kind": "environment", "uuid": env_uuid,
                                 "title": f"{setter}'s puzzle", "author": players[setter],
                                 "source": f"# by {setter}\nclass Environment: ...\n",
                                 "created_at": WHEN, "validation": None})
            environments.append({"kind": "hint", "uuid": hint_uuid, "environment": env_uuid,
                                 "author": players[setter], "text": "look closer"})
            record[f"env_{side}"], record[f"hint_{side}"] = env_uuid, hint_uuid
            for seed in range(attempts):
                for hint, success in ((None, unhinted), (hint_uuid, hinted)):
                    episodes.append({
                        "kind": "episode", "uuid": _id(), "duel": duel_uuid,
                        "environment": env_uuid, "hint": hint, "solver": players[solver],
                        "seed": seed, "status": "finished", "success": success, "steps": 3,
                        "input_tokens": 0, "output_tokens": 0, "cost": 0.0,
                        "started_at": WHEN, "finished_at": WHEN, "error": ""})
        duels.append(record)
        outcomes[duel_uuid] = "a"
    lines += environments + duels + episodes
    return "".join(json.dumps(line) + "\n" for line in lines), outcomes


def test_unvalidated_environments_import_and_are_rated_as_stated(capsys):
    text, outcomes = older_study()
    exchange_import(stream=io.BytesIO(text.encode()))
    assert set(Environment.objects.values_list("status", flat=True)) == {
        EnvironmentStatus.PENDING}
    for duel in Duel.objects.all():
        assert duel.outcome == outcomes[str(duel.uuid)]
        assert not duel.forfeit_a and not duel.forfeit_b
        assert (duel.setter_score_a, duel.setter_score_b) == (1.0, 0.0)

    # No --refresh: the import made the (missing) snapshot stale, so this recomputes.
    call_command("analytics", "--json")
    printed = json.loads(capsys.readouterr().out)
    ratings = printed["ratings"]
    assert [row["player"] for row in ratings] == NAMES
    assert all(row["duels"] == len(NAMES) - 1 for row in ratings)
    assert ratings[0]["rating"] > 1000 > ratings[-1]["rating"]
    wins = {row["player"]: row["setter_score"] for row in printed["setters"]}
    # Each player scores 1 as A (against later names) and 0 as B: never the 0 of a forfeit.
    assert wins["alpha"] == 1.0 and wins["delta"] == 0.0
    assert printed["transitivity"]["cyclic_triads"] == 0
    assert printed["transitivity"]["transitive_share"] == 1.0


def test_a_stated_outcome_the_episodes_contradict_is_refused_with_its_line():
    text, _ = older_study()
    lines = text.splitlines(keepends=True)
    line = next(i for i, row in enumerate(lines) if '"kind": "duel"' in row)
    lines[line] = lines[line].replace('"outcome": "a"', '"outcome": "draw"')
    with pytest.raises(ExchangeImportError) as error:
        exchange_import(stream=io.BytesIO("".join(lines).encode()))
    assert error.value.line == line + 1
    assert "states outcome 'draw'" in str(error.value)
    assert not Duel.objects.exists()


def test_analytics_after_an_import_print_figures_without_a_refresh(capsys):
    call_command("analytics", "--json")  # an empty snapshot first
    capsys.readouterr()
    text, _ = older_study(attempts=2)
    exchange_import(stream=io.BytesIO(text.encode()))
    call_command("analytics", "--json")
    printed = json.loads(capsys.readouterr().out)
    assert len(printed["ratings"]) == len(NAMES)
    assert [finding["verdict"] for finding in printed["findings"]][0] in (
        "supported", "contradicted", "not enough data")
