"""Where the hint mattered: the pure function names the step at which paired plays part ways
(generated fields with the difficulty planted at a known step), and `analytics --study --json`
names it for a planted study's versions."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
from django.core.management import call_command
from django.db.models import F

from duels.models import Condition, Environment, Episode, Step
from duels.studies.figures_hint import (
    PlayPair,
    hint_mattered,
    hint_mattered_sentence,
    parting_step,
)
from tests.helpers.study_data import played_study


def test_parting_is_the_first_differing_action_or_where_one_play_went_on():
    assert parting_step(["a", "b", "c"], ["a", "x"]) == 2
    assert parting_step(["a", "b"], ["a", "b", "c"]) == 3
    assert parting_step(["a"], ["a"]) is None
    assert parting_step([], ["a"]) == 1


def _planted_pairs(rng: random.Random, *, step: int, pairs: int) -> list[PlayPair]:
    """Plays that share their first step − 1 actions; at `step` the unhinted play cannot go on
    (it repeats `look` or stops) and the hinted one says the word. A quarter of the pairs part
    somewhere else instead, each at a step of its own."""
    words = ["north", "south", "open gate", "pull lever", "read sign", "look"]
    elsewhere_steps = [n for n in range(1, step + 12) if n != step]
    rng.shuffle(elsewhere_steps)
    noisy = set(rng.sample(range(pairs), pairs // 4))
    result = []
    for index in range(pairs):
        shared = [rng.choice(words) for _ in range(step - 1)]
        if index in noisy:
            elsewhere = elsewhere_steps.pop()
            common = (shared + [rng.choice(words) for _ in range(20)])[:elsewhere - 1]
            result.append(PlayPair(unhinted=[*common, "give up"], hinted=[*common, "xyzzy"],
                                   unhinted_passed=False, hinted_passed=True))
            continue
        unhinted = shared + (["look"] * rng.randint(1, 4) if rng.random() < 0.7 else [])
        hinted = [*shared, "say word", "enter"]
        result.append(PlayPair(unhinted=unhinted, hinted=hinted, unhinted_passed=False,
                               hinted_passed=rng.random() < 0.9))
    return result


@pytest.mark.parametrize("case", range(40))
def test_the_planted_step_is_named_over_generated_fields(case):
    rng = random.Random(case)
    step = rng.randint(1, 12)
    pairs = _planted_pairs(rng, step=step, pairs=rng.randint(4, 30))
    found = hint_mattered(pairs)
    assert found.step == step and found.pairs == len(pairs)
    assert found.parted == sum(parting_step(p.unhinted, p.hinted) == step for p in pairs)
    assert found.hinted_next == "say word"
    sentence = hint_mattered_sentence(found)
    assert f"{found.parted} of {found.pairs} pairs parted at step {step}" in sentence
    assert "`say word`" in sentence


def test_no_pair_and_no_parting_say_so():
    assert hint_mattered([]) is None
    assert "No solver played" in hint_mattered_sentence(None)
    same = hint_mattered([PlayPair(["a", "b"], ["a", "b"], True, True)] * 3)
    assert same.as_json() == {"step": None, "pairs": 3, "parted": 0}
    assert "took the same actions throughout" in hint_mattered_sentence(same)


def _actions(play: Episode, actions: list[str]) -> None:
    Step.objects.filter(episode=play, index__gte=1).delete()
    Step.objects.bulk_create([Step(episode=play, index=index, observation="…", action=action,
                                   reply=f"ACTION: {action}")
                              for index, action in enumerate(actions, start=1)])


@pytest.mark.django_db
def test_the_study_json_names_the_planted_step_of_each_version():
    study = played_study()
    planted = {}
    for version in Environment.objects.filter(study=study):
        step = 2 + version.revision * 2  # first versions at step 2, revisions at step 4
        planted[str(version.uuid)] = step
        for play in Episode.objects.filter(environment=version):
            shared = ["look", "open gate", "north", "west", "east"][:step - 1]
            if play.condition == Condition.HINTED:
                _actions(play, [*shared, "say word", "enter"])
            else:
                _actions(play, [*shared, "look", "look"])
    out = StringIO()
    call_command("analytics", "--study", str(study.uuid), "--json", stdout=out)
    rows = json.loads(out.getvalue())["environments"]
    assert rows and {row["uuid"] for row in rows} == set(planted)
    for row in rows:
        # Two peers × two seeds: four matched pairs, self plays apart; all part at the step.
        assert row["hint_mattered"] == {"step": planted[row["uuid"]], "pairs": 4, "parted": 4}


@pytest.mark.django_db
def test_the_compare_page_and_the_story_name_the_planted_step(owner_client):
    study = played_study(harden=False)
    for play in Episode.objects.filter(study=study):
        if play.condition == Condition.HINTED:
            _actions(play, ["look", "open gate", "say word"])
        else:
            _actions(play, ["look", "open gate", "look", "look"])
    hinted = Episode.objects.filter(study=study, condition=Condition.HINTED).exclude(
        solver_id=F("environment__author_id")).select_related("environment__author").first()
    page = owner_client.get(f"/episodes/{hinted.uuid}/compare/").content.decode()
    assert 'id="hint-mattered"' in page
    assert "part at <a href=\"#row-3\">step 3</a>, where most of the field" in page
    assert "4 of 4 pairs parted at step 3, after `open gate` (step 2)" in page
    lineage = f"{hinted.environment.author.name}/{hinted.environment.slot}"
    story = owner_client.get(f"/studies/{study.uuid}/slots/{lineage}/").content.decode()
    assert 'data-step="3"' in story and "with the hint, 4 of 4 went on to `say word`" in story

