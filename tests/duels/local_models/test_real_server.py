"""EnvDuels against a real model behind a real OpenAI-compatible server (SmolLM2-135M-Instruct
served by llama-cpp-python on 127.0.0.1): the check, a cut and a garbage reply, an overflow the
server reports, and a tiny study with the model in the field as setter and solver."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from duels.local_models.install import local_model_ready
from duels.local_models.players import local_model_register
from duels.local_models.server import server_models
from duels.models import Condition, EndReason, Environment, Episode, ModelCall, Status
from duels.players import player_client, prompts
from duels.players.actions import TEXT, action_read
from duels.players.context import ContextOverflow
from tests.helpers.installation import migrated_installation
from tests.helpers.local_model import NAME, local_model_server  # noqa: F401 (a fixture)
from tests.helpers.parts import need
from tests.helpers.studies import builtin_players, study_run, study_sandbox  # noqa: F401

pytestmark = [pytest.mark.local_model, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def real_player(db, local_model_server):  # noqa: F811 (the fixture imported above)
    """The player `local-smollm2` registered as `manage.py local_model serve` does, with a
    small reply limit so each turn costs a few seconds on 2 cores."""
    return local_model_register(name=NAME, base_url=local_model_server.base_url,
                                context_window=local_model_server.context_window,
                                params={"max_tokens": 48})


def solver_chat(observation: str = "You stand in a dark room. A door is north.") -> list:
    return prompts.solver_messages(hint=None, history=[], observation=observation, protocol=TEXT)


def test_the_served_player_is_registered_for_this_server(real_player, local_model_server):  # noqa: F811
    assert real_player.provider == "openai_compatible"
    assert real_player.base_url == local_model_server.base_url
    assert real_player.max_concurrency == 1
    assert real_player.params["context_window"] == local_model_server.context_window
    assert real_player.api_key_env == ""


def test_player_check_passes(real_player):
    out = io.StringIO()
    call_command("player_check", real_player.name, "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["ok"] is True and result["format_error"] == ""
    assert result["action"].lower() == "ready"
    assert result["input_tokens"] > 0 and result["output_tokens"] > 0
    assert ModelCall.objects.get(player=real_player, role=ModelCall.Role.CHECK).reply


def test_a_reply_cut_at_max_tokens_is_kept_and_read_as_far_as_it_goes(real_player):
    real_player.params = {key: value for key, value in real_player.params.items()
                          if key != "max_tokens"}  # the caller's limit, not the player's
    completion = player_client(real_player).complete(solver_chat(), max_tokens=4)
    assert completion.raw["stop_reason"] == "length"
    assert completion.text.strip()
    assert 1 <= completion.output_tokens <= 8  # counted by EnvDuels: the stream has no usage
    assert completion.raw["usage_source"] == "estimated"
    parsed = action_read(completion=completion, protocol=TEXT)
    assert bool(parsed.action) != bool(parsed.format_error)


def test_a_garbage_reply_is_a_format_error_with_its_reason(real_player):
    real_player.params = {**real_player.params, "temperature": 2.0, "top_p": 1.0,
                          "extra_body": {"top_k": 0, "seed": 7}}
    completion = player_client(real_player).complete(
        solver_chat("@@@ ### %%% ~~~ ??? !!!"), max_tokens=32)
    parsed = action_read(completion=completion, protocol=TEXT)
    assert completion.text
    assert parsed.format_error or parsed.action  # read or refused, never a crash
    if parsed.format_error:
        assert "ACTION" in parsed.format_error or "template" in parsed.format_error


def test_an_overflow_the_server_reports_mid_stream_is_the_models_failure(real_player):
    """No window known to EnvDuels: the server's own refusal, which llama-cpp-python sends as
    an empty 200 stream, comes back as a ContextOverflow, not a transient fault retried."""
    real_player.params = {key: value for key, value in real_player.params.items()
                          if key != "context_window"}
    chat = solver_chat("You see: " + "a box, " * 1500)
    with pytest.raises(ContextOverflow, match="maximum context length is 2048 tokens"):
        player_client(real_player).complete(chat, max_tokens=16)


@pytest.mark.django_db(transaction=True)
def test_a_tiny_study_with_the_real_model_in_the_field_runs_to_its_end(
        study_sandbox, local_model_server, settings):  # noqa: F811
    """SmolLM2 writes an environment (admitted, or refused with a reason) and plays
    builtin-architect's in both conditions until its 1,100-token window is full (its setter
    prompt fits, with room for a 48-token answer; a repair would not): every reply is stored
    with its tokens, read or marked a format error with the reason, and the overflow ends the
    episode as the model's failure. One play at a time, so each turn reuses the previous
    turn's prompt from the server's cache."""
    local = local_model_register(name=NAME, base_url=local_model_server.base_url,
                                 context_window=1100, params={"max_tokens": 48})
    architect = builtin_players(("builtin-architect",))[0]
    study = study_run(players=[architect, local], concurrency=1)
    assert study.status == Status.FINISHED, study.error
    written = Environment.objects.filter(study=study, author=local)
    # Refused: the slot's note says why (the answer's format, or the validation's report).
    notes = list(study.slots.filter(author=local).values_list("note", "error"))
    assert written.filter(status="valid").exists() or all(
        (note + error).strip() for note, error in notes), notes
    plays = Episode.objects.filter(study=study, solver=local,
                                   environment__author=architect).order_by("condition")
    assert {episode.condition for episode in plays} == {Condition.UNHINTED, Condition.HINTED}
    for episode in plays:
        assert episode.status == Status.FINISHED
        assert episode.end_reason in {EndReason.CONTEXT_OVERFLOW, EndReason.DONE,
                                      EndReason.MAX_STEPS}
        steps = list(episode.trajectory.filter(index__gt=0))
        assert steps
        for step in steps:
            assert step.input_tokens > 0 and step.output_tokens > 0
            assert bool(step.action) != bool(step.format_error)
        if episode.end_reason == EndReason.CONTEXT_OVERFLOW:
            assert not episode.success and "1,100 tokens" in episode.error


def test_serve_prints_its_json_once_it_answers_and_stops_the_server_on_sigterm(tmp_path):
    """`manage.py local_model serve smollm2 --json` in its own installation: one JSON line
    once the server answers, the player registered there, and SIGTERM stops both."""
    need(local_model_ready(name=NAME) is not None,
         f"the local model {NAME} is not installed: run `python manage.py local_model install "
         f"{NAME}`")
    migrated_installation(tmp_path)
    env = {**os.environ, "ENVDUELS_VAR_DIR": str(tmp_path)}
    env.pop("DATABASE_URL", None)
    command = subprocess.Popen(
        [sys.executable, "manage.py", "local_model", "serve", NAME, "--json"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        printed = json.loads(command.stdout.readline())
        assert printed["player"] == "local-smollm2" and printed["model"] == "SmolLM2-135M-Instruct"
        assert printed["base_url"].startswith("http://127.0.0.1:")
        assert server_models(printed["base_url"]) is not None  # it answers already
    finally:
        command.send_signal(signal.SIGTERM)
        assert command.wait(timeout=30) == 0, command.stderr.read()[-2000:]
    assert server_models(printed["base_url"], timeout=1) is None  # the server went with it
