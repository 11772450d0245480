"""The built-in setters in a study: they write the slot's domain, two slots of one domain get
two designs, and a revision answers the field's digest (harder when the field passed without
the hint too often, easier when even the hint did not carry it)."""

from __future__ import annotations

import pytest

from duels.players import prompts
from duels.players.builtin import BuiltinPlayer
from duels.players.scripted.common import parse_title
from duels.players.scripted.setters import domain_family, revise_design

PYTHON = "3.11.2"


def setter(style: str = "safe") -> BuiltinPlayer:
    return BuiltinPlayer(name="b", model="scripted", params={"setter_style": style,
                                                            "solver_skill": "greedy",
                                                            "seed": 1})


def answer(player: BuiltinPlayer, messages) -> prompts.SetterAnswer:
    return prompts.parse_setter_answer(player.complete(messages).text)


def test_the_setter_writes_the_slots_domain_and_one_design_per_slot():
    player = setter()
    first, second = (answer(player, prompts.study_setter_messages(
        python_version=PYTHON, domain="cipher", slot=slot, players=3, seeds=2))
        for slot in ("env_001", "env_002"))
    assert first.family == second.family == "cipher"
    assert first.source != second.source  # same domain, another slot: another design
    # A domain no family is named after gets the same family every time, however it is spaced.
    assert domain_family("logic puzzles") == domain_family(" Logic  puzzles ")
    unknown = answer(player, prompts.study_setter_messages(
        python_version=PYTHON, domain="logic puzzles", slot="env_001", players=3, seeds=2))
    assert unknown.family == domain_family("logic puzzles")


def digest(title: str, unhinted: float, hinted: float) -> str:
    return prompts.field_digest(version="env_001", title=title, domain="maze", hint="h",
                                seeds=[1, 2], p_unhinted=unhinted, p_hinted=hinted, solvers=[],
                                unhinted_failures=[], hinted_successes=[], flipped=[])


@pytest.mark.parametrize(("unhinted", "hinted", "level"), [
    (1.0, 1.0, 4),    # everyone passed without the hint: two levels harder
    (0.375, 0.75, 3),  # too many passed without it: one level harder
    (0.0, 0.25, 1),   # even the hint did not carry the field: a level easier
    (0.0, 0.75, 2),   # failed without, passed with: the same level, written anew
])
def test_a_revision_answers_the_fields_digest(unhinted, hinted, level):
    field = digest("Scrambled-compass maze (maze, level 2)", unhinted, hinted)
    assert revise_design(digest=field) == ("maze", level)
    revised = answer(setter(), prompts.hardening_messages(
        python_version=PYTHON, domain="maze", slot="env_001", round_index=1, digest=field,
        source="class Environment: ...", hint="h"))
    assert parse_title(revised.title) == ("maze", level)


def test_a_digest_of_no_scripted_environment_is_revised_at_the_hint_level():
    assert revise_design(digest=digest("A person's puzzle", 1.0, 1.0)) is None
