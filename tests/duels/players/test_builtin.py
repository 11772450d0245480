"""Built-in players: they read the prompt text like a model, and answer in the same format."""

from __future__ import annotations

import random
import re

import pytest

from duels.players import prompts
from duels.players.actions import ParsedAction, action_from_text
from duels.players.base import ChatPlayer, PlayerError
from duels.players.builtin import BUILTIN_PLAYER_SPECS, BuiltinPlayer
from duels.players.scripted import FAMILIES, SKILLS, cipher, lights, maze, sequence, trading, vault
from duels.players.scripted.common import HINT_ATTENTION
from duels.players.scripted.setters import SETTER_STYLES
from duels.players.scripted.solvers import solve
from tests.sandbox_runner.conftest import first_working_backend


def setter_prompt(**options):
    """The setter prompt as a duel sends it; the Python version only appears in its text."""
    return prompts.setter_messages(python_version="3.11.2", **options)


def player(**params) -> BuiltinPlayer:
    return BuiltinPlayer(name="builtin-test", model="scripted-test-v1", params=params)


def authored(setter: BuiltinPlayer, digests: list[str] | None = None) -> prompts.SetterAnswer:
    completion = setter.complete(setter_prompt(digests=digests))
    return prompts.parse_setter_answer(completion.text)


def reset_text(answer: prompts.SetterAnswer, seed: int = 0) -> str:
    """The reset text as the solver sees it, from the environment running in the sandbox."""
    from sandbox_runner import open_sandbox

    with open_sandbox(answer.source, backend=first_working_backend()) as sandbox:
        return sandbox.reset(seed=seed)


def test_roster_covers_every_style_and_skill_with_slug_names():
    assert 4 <= len(BUILTIN_PLAYER_SPECS) <= 6
    assert {s["params"]["setter_style"] for s in BUILTIN_PLAYER_SPECS} == set(SETTER_STYLES)
    assert {s["params"]["solver_skill"] for s in BUILTIN_PLAYER_SPECS} == set(SKILLS)
    names = [s["name"] for s in BUILTIN_PLAYER_SPECS]
    assert len(set(names)) == len(names)
    assert all(re.fullmatch(r"builtin-[a-z0-9-]+", n) for n in names)
    for spec in BUILTIN_PLAYER_SPECS:
        assert spec["model"] and spec["description"] and "\n" not in spec["description"]
        assert BuiltinPlayer(name=spec["name"], model=spec["model"], params=spec["params"])


def test_builtin_player_is_a_chat_player_of_the_builtin_provider():
    assert issubclass(BuiltinPlayer, ChatPlayer)
    assert player().provider == "builtin"


@pytest.mark.parametrize(
    "params",
    [{"setter_style": "sloppy"}, {"solver_skill": "oracle"}, {"family": "chess"},
     {"setter_format": "weird"}],
)
def test_unknown_params_are_a_clear_player_error(params):
    with pytest.raises(PlayerError, match="must be one of"):
        player(**params)


def test_player_check_is_answered_with_an_action_line():
    completion = player().complete(prompts.PLAYER_CHECK_MESSAGES)
    assert action_from_text(completion.text) == ParsedAction("ready")
    assert completion.input_tokens > 0 and completion.output_tokens > 0


def test_setter_answer_is_well_formed_and_deterministic_in_seed():
    first = player(setter_style="needs_hint", seed=7).complete(setter_prompt()).text
    again = player(setter_style="needs_hint", seed=7).complete(setter_prompt()).text
    assert first == again
    answer = prompts.parse_setter_answer(first)
    assert "class Environment" in answer.source and answer.hint
    others = {
        player(setter_style="needs_hint", seed=seed).complete(setter_prompt()).text
        for seed in range(6)
    }
    assert len(others) > 1


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_a_pinned_family_names_itself_in_the_title(family):
    answer = authored(player(setter_style="safe", family=family))
    assert f"({family}, level " in answer.title


def test_styles_pick_their_difficulty():
    def level(style: str, seed: int) -> int:
        title = authored(player(setter_style=style, seed=seed)).title
        return int(re.search(r"level (\d)", title).group(1))

    assert {level("safe", s) for s in range(8)} <= {1, 2}
    assert {level("needs_hint", s) for s in range(8)} == {4}
    assert {level("overreach", s) for s in range(8)} <= {4, 5}
    assert 5 in {level("overreach", s) for s in range(8)}


def digest(title: str, p_unhinted: float, p_hinted: float) -> str:
    return prompts.observe_digest(
        title=title, author="builtin-architect", hint="(hint)", p_unhinted=p_unhinted,
        p_hinted=p_hinted, setter_score=p_hinted * (1 - p_unhinted),
        failed_unhinted_actions=[["press 1", "press 2"]],
    )


def test_observer_copies_the_design_that_needed_its_hint():
    digests = [
        digest("Code vault (vault, level 1)", 1.0, 1.0),
        digest("Lights out (lights, level 3)", 0.0, 1.0),
        digest("Someone's maze", 0.0, 1.0),  # not a scripted title: ignored
    ]
    assert "(lights, level 3)" in authored(player(setter_style="observer"), digests).title


def test_observer_makes_it_harder_when_solvers_passed_without_the_hint():
    digests = [digest("Secret cipher (cipher, level 2)", 0.75, 1.0)]
    assert "(cipher, level 3)" in authored(player(setter_style="observer"), digests).title


def test_observer_without_digests_aims_for_needs_the_hint():
    assert "level 4)" in authored(player(setter_style="observer")).title


def test_a_broken_once_setter_fixes_its_answer_after_the_repair_request():
    setter = player(setter_style="safe", setter_format="broken_once", seed=3)
    messages = setter_prompt()
    first = setter.complete(messages).text
    with pytest.raises(prompts.SetterFormatError) as caught:
        prompts.parse_setter_answer(first)
    messages += [{"role": "assistant", "content": first},
                 prompts.repair_message(error=str(caught.value))]
    repaired = prompts.parse_setter_answer(setter.complete(messages).text)
    assert repaired.hint and "class Environment" in repaired.source


def first_replies(skill: str, answer: prompts.SetterAnswer, seeds) -> list[tuple[str, str]]:
    """The solver's first reply (unhinted, hinted) on each seed's reset text."""
    from sandbox_runner import open_sandbox

    solver = player(solver_skill=skill)
    replies = []
    with open_sandbox(answer.source, backend=first_working_backend()) as sandbox:
        for seed in seeds:
            observation = sandbox.reset(seed=seed)
            replies.append(tuple(
                solver.complete(
                    prompts.solver_messages(hint=hint, history=[], observation=observation)
                ).text
                for hint in (None, answer.hint)
            ))
    return replies


def test_hint_attention_is_graded_and_the_random_solver_is_blind():
    assert set(HINT_ATTENTION) == set(SKILLS)
    assert HINT_ATTENTION["random"] == 0
    assert 0 < HINT_ATTENTION["search"] < HINT_ATTENTION["hint_search"] == 1
    task = "Code vault.\nA vault is locked by a 6-digit code (each digit 0-9)."
    for seed in range(10):
        actions = {
            solve(skill="random", observations=[task], actions=[], hint=hint,
                  rng=random.Random(seed), episode_rng=random.Random(seed))
            for hint in (None, "Every digit of the code is either 4 or 9.")
        }
        assert len(actions) == 1


def test_greedy_always_folds_the_hint_into_its_next_move():
    answer = authored(player(setter_style="needs_hint", family="vault", seed=1))
    digits = vault.hinted_digits(answer.hint)
    for unhinted, hinted in first_replies("greedy", answer, range(4)):
        assert action_from_text(unhinted).action == "enter 000000"
        assert action_from_text(hinted).action == f"enter {digits[0] * 6}"


def test_search_notices_the_hint_in_some_episodes_and_hint_search_in_all():
    answer = authored(player(setter_style="needs_hint", family="maze", seed=2))
    seeds = range(12)
    search = first_replies("search", answer, seeds)
    ace = first_replies("hint_search", answer, seeds)
    assert not any("hint" in unhinted.lower() for unhinted, _ in search + ace)
    noticed = sum("hint" in hinted.lower() for _, hinted in search)
    assert 0 < noticed < len(seeds)
    assert all("hint" in hinted.lower() for _, hinted in ace)


def test_hint_search_applies_the_hint_from_its_system_prompt():
    answer = authored(player(setter_style="needs_hint", family="maze", seed=2))
    observation = reset_text(answer)
    solver = player(solver_skill="hint_search")
    replies = [
        solver.complete(prompts.solver_messages(hint=h, history=[], observation=observation)).text
        for h in (None, answer.hint)
    ]
    assert "hint" in replies[1].lower() and "hint" not in replies[0].lower()
    assert all(action_from_text(r).format_error == "" for r in replies)


def test_solver_replies_are_deterministic_for_a_conversation():
    answer = authored(player(setter_style="safe", family="lights", seed=4))
    messages = prompts.solver_messages(hint=None, history=[], observation=reset_text(answer))
    random_solver = player(solver_skill="random", seed=9)
    assert random_solver.complete(messages).text == random_solver.complete(messages).text


def test_an_unknown_environment_gets_a_command_it_mentions():
    messages = prompts.solver_messages(
        hint=None, history=[], observation="A door. Say `open door` or `knock` to proceed."
    )
    action = action_from_text(player(solver_skill="search").complete(messages).text)
    assert action.action in {"open door", "knock"} and not action.format_error


def test_the_latency_setting_delays_every_completion(settings):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 60
    completion = player().complete(prompts.PLAYER_CHECK_MESSAGES)
    assert completion.latency_ms >= 60


def test_no_latency_by_default(settings):
    settings.ENVDUELS_BUILTIN_LATENCY_MS = 0
    assert player().complete(prompts.PLAYER_CHECK_MESSAGES).latency_ms < 50


HINT_READERS = {
    vault: vault.hinted_digits,
    sequence: sequence.hinted_cycle,
    maze: maze.hinted_compass,
    cipher: cipher.hinted_shifts,
    lights: lights.hinted_offsets,
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("difficulty", [1, 2, 3, 4, 5])
def test_hints_are_sentences_the_hint_reader_understands(family, difficulty):
    module = FAMILIES[family]
    env = module.generate(difficulty=difficulty, rng=random.Random(difficulty))
    assert env.family == family and env.difficulty == difficulty
    assert env.hint[0].isupper() and env.hint.endswith(".") and "\n" not in env.hint
    if module in HINT_READERS:
        assert HINT_READERS[module](env.hint)
    elif module is trading and difficulty >= 3:
        assert trading.hinted_offers(env.hint)


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generation_is_deterministic_in_the_rng(family):
    make = FAMILIES[family].generate
    assert make(difficulty=3, rng=random.Random(5)) == make(difficulty=3, rng=random.Random(5))
