"""`export --format setter-chat`: one record per setter answer, with the messages the setter was
sent (observe-mode digests included), its answer, and the score the duel page shows for it."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from duels.engine import authoring
from duels.engine.scheduler import tournament_drive
from duels.engine.tournaments import tournament_create
from duels.models import Condition, EnvironmentStatus, ModelCall, Player, Status
from duels.players import prompts
from duels.results.rescoring import duel_score_stored
from duels.selectors.duels import duel_halves
from duels.services.players import player_seed_builtin
from tests.duels.engine.test_tournament_run import sandbox_backend  # noqa: F401 (autouse)

KEYS = {"messages", "answer", "valid", "invalid_reason", "setter_score", "p_unhinted",
        "p_hinted", "design", "player", "duel", "study"}


def export(tmp_path, *options: str) -> list[dict]:
    out = tmp_path / f"setter-{len(list(tmp_path.iterdir()))}.jsonl"
    call_command("export", "--format", "setter-chat", "--out", str(out), *options)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_builtin_tournament_exports_every_setter_answer_as_sent_with_the_duel_pages_scores(
        tmp_path, monkeypatch, settings):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    player_seed_builtin()
    # Every setter answer as it crossed the wire: (player, messages, reply).
    sent: list[tuple[str, list, str]] = []
    real_client = authoring.player_client

    def recording_client(player):
        client = real_client(player)

        class Recording:
            def complete(self, messages, **options):
                completion = client.complete(messages, **options)
                sent.append((player.name, json.loads(json.dumps(messages)), completion.text))
                return completion

        return Recording()

    monkeypatch.setattr(authoring, "player_client", recording_client)
    players = list(Player.objects.filter(name__in=["builtin-architect", "builtin-watcher"]))
    sloppy = Player.objects.create(name="sloppy", provider="builtin", model="scripted-sloppy",
                                   builtin=True, params={"setter_style": "safe",
                                                         "solver_skill": "greedy", "seed": 9,
                                                         "setter_format": "broken_once"})
    tournament = tournament_create(players=[*players, sloppy], rounds=2, attempts=2,
                                   observe=True, concurrency=6)
    assert tournament_drive(tournament=tournament) is True

    records = export(tmp_path, "--tournament", str(tournament.uuid))
    answers = ModelCall.objects.filter(duel__tournament=tournament, error="",
                                       role__in=[ModelCall.Role.SETTER, ModelCall.Role.REPAIR])
    assert len(records) == answers.count() == len(sent) > 12
    assert all(set(record) == KEYS for record in records)
    # Each record's messages and answer are what crossed the wire, digests included.
    assert sorted(json.dumps([r["player"], r["messages"], r["answer"]]) for r in records) == (
        sorted(json.dumps(list(call)) for call in sent))
    observed = [r for r in records if prompts.DIGESTS_HEADER in r["messages"][-1]["content"]]
    assert observed, "the second round's prompts carry digests of the first"
    # The sloppy setter's first answers are malformed: invalid, 0, and the repair is what counted.
    malformed = [r for r in records if r["invalid_reason"].startswith("malformed answer: ")]
    assert malformed and all(r["player"] == "sloppy" and r["setter_score"] == 0.0
                             and r["design"] is None for r in malformed)
    for record in records:
        if record["design"] is None:
            continue
        duel = tournament.duels.get(uuid=record["duel"])
        (half,) = [h for h in duel_halves(duel=duel) if h["setter"].name == record["player"]]
        stored = duel_score_stored(duel=duel).side(half["side"])
        assert record["design"] == half["environment"].content_hash
        assert (record["setter_score"], record["p_unhinted"], record["p_hinted"]) == (
            half["setter_score"], half["p_unhinted"], half["p_hinted"]) == (
            stored.setter_score, stored.p_unhinted, stored.p_hinted)
        assert record["valid"] == (half["environment"].status == EnvironmentStatus.VALID)
    assert all(r["study"] is None for r in records)

    valid = export(tmp_path, "--tournament", str(tournament.uuid), "--valid", "yes")
    assert valid == [r for r in records if r["valid"]] and valid
    best = max(r["setter_score"] for r in records)
    assert export(tmp_path, "--min-setter-score", str(best)) == [
        r for r in records if r["setter_score"] is not None and r["setter_score"] >= best]
    assert export(tmp_path, "--player", "sloppy") == [r for r in records
                                                      if r["player"] == "sloppy"]


@pytest.mark.django_db
def test_a_study_answer_carries_its_study_and_the_fields_mean_score(make, tmp_path):
    from duels.models import Study

    author, peer, other = make.player(name="author"), make.player(name="peer"), make.player()
    study = Study.objects.create(name="field", seeds=2)
    environment = make.environment(author=author, study=study, slot="env_001",
                                   status=EnvironmentStatus.VALID)
    hint = make.hint(environment=environment, author=author)
    messages = [{"role": "system", "content": "set"},
                {"role": "user", "content": "Write one.\n\nHARDENING DIGEST: solvers won"}]
    ModelCall.objects.create(study=study, environment=environment, player=author,
                             role=ModelCall.Role.SETTER, messages=messages, reply="the answer")
    results = {peer: ([False, False], [True, True]),  # 1 against peer
               other: ([True, False], [True, True]),  # 1/2 against the other
               author: ([False, False], [True, True])}  # self plays: not the field's
    for solver, (unhinted, hinted) in results.items():
        for seed in range(2):
            for condition, passed in ((Condition.UNHINTED, unhinted[seed]),
                                      (Condition.HINTED, hinted[seed])):
                make.episode(study=study, duel=None, environment=environment, solver=solver,
                             seed=seed, condition=condition, status=Status.FINISHED,
                             success=passed,
                             hint=hint if condition == Condition.HINTED else None)

    (record,) = export(tmp_path, "--study", str(study.uuid))
    assert record == {"messages": messages, "answer": "the answer", "valid": True,
                      "invalid_reason": "", "setter_score": 0.75, "p_unhinted": 0.25,
                      "p_hinted": 1.0, "design": environment.content_hash,
                      "player": "author", "duel": None, "study": str(study.uuid)}
    assert export(tmp_path, "--study", str(make.tournament().uuid)) == []
