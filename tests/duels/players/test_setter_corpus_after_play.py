"""The corpus answers that pass validation but are not the same puzzle on a path a solver
plays, or that show the hint there: played as a solver would, each episode is voided after play
with the evidence (the replay's other observation beside the played one, or the hint's step).

The episodes here belong to no duel and no study: the check after play works on an episode
whoever owns it.
"""

from __future__ import annotations

import pytest

from duels.engine.proof import episode_prove
from duels.engine.validation import environment_validate
from duels.models import (
    Condition,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Proof,
    Status,
    Step,
)
from duels.players import prompts
from sandbox_runner import open_sandbox
from tests.duels.engine import conftest
from tests.duels.players.test_setter_corpus import EXPECTED, answer_text

sandbox_backend = conftest.sandbox_backend  # the engine tests' fixture: a working backend set
AFTER_PLAY = sorted(name for name, expected in EXPECTED.items() if "after_play" in expected)


def test_the_corpus_has_answers_only_play_catches():
    assert len(AFTER_PLAY) >= 3


def played_episode(*, environment: Environment, hint: Hint | None, solver, actions: list[str],
                   backend: str) -> Episode:
    """An episode played in a real sandbox and stored step by step, as the engine stores it."""
    episode = Episode.objects.create(
        environment=environment, hint=hint, solver=solver, seed=0,
        condition=Condition.HINTED if hint else Condition.UNHINTED, status=Status.RUNNING)
    with open_sandbox(environment.source, backend=backend) as sandbox:
        Step.objects.create(episode=episode, index=0, observation=sandbox.reset(seed=0))
        for index, action in enumerate(actions, start=1):
            result = sandbox.step(action)
            Step.objects.create(episode=episode, index=index, observation=result.observation,
                                action=action, reply=f"ACTION: {action}", reward=result.reward,
                                done=result.done, success=result.success)
            if result.done:
                break
    Episode.objects.filter(pk=episode.pk).update(status=Status.FINISHED, steps=index,
                                                 success=result.success)
    return episode


@pytest.mark.django_db
@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", AFTER_PLAY)
def test_admitted_answers_are_voided_on_the_path_played(name, sandbox_backend, settings, make):
    expected = EXPECTED[name]
    after_play = expected["after_play"]
    answer = prompts.parse_setter_answer(answer_text(name))
    setter, solver = make.player(), make.player()
    environment = Environment.objects.create(
        title=answer.title, author=setter, source=answer.source, family=answer.family,
        status=EnvironmentStatus.PENDING)
    hint = Hint.objects.create(environment=environment, author=setter, text=answer.hint)
    environment_validate(environment=environment)
    assert environment.status == EnvironmentStatus.VALID, environment.validation

    episode = played_episode(environment=environment, hint=hint if after_play["hinted"] else None,
                             solver=solver, actions=after_play["actions"], backend=sandbox_backend)
    assert episode.duel_id is None and episode.study_id is None

    assert episode_prove(episode=episode)[0] == Proof.VOIDED

    environment.refresh_from_db()
    assert environment.status == EnvironmentStatus.INVALID
    evidence = environment.validation["after_play"]
    assert evidence["kind"] == after_play["kind"]
    assert evidence["episode"] == str(episode.uuid) and evidence["seed"] == 0
    assert evidence["actions"] == after_play["actions"][:evidence["step"]]
    shown = " ".join(str(evidence.get(key, "")) for key in ("left", "right", "shown"))
    for needle in after_play["contains"]:
        assert needle in shown, evidence
    if evidence["kind"] == "replay":
        assert evidence["left"] != evidence["right"]  # both observations, side by side
    # The solver is not blamed: its episode keeps its own result.
    episode.refresh_from_db()
    assert episode.status == Status.FINISHED and episode.proof == Proof.VOIDED
