"""Knowing the bill: projections for a duel and a tournament, spend so far, where they show."""

from __future__ import annotations

import io
import json
import random

import pytest
from django.core.management import call_command

from duels.models import Duel, Episode, Status, Step, Tournament
from duels.selectors.costs import (
    DEFAULT_STEP_LIMIT,
    duel_projection,
    player_usage,
    seconds_per_token,
    tournament_projection,
    tournament_spend,
)

pytestmark = pytest.mark.django_db


def priced(make, name: str, **fields):
    return make.player(name=name, provider="anthropic", model="claude-test", builtin=False,
                       api_key_env="ANTHROPIC_API_KEY", price_in=3.0, price_out=15.0, **fields)


def with_history(make, player, *, steps: int = 4, episodes: int = 3):
    """Finished episodes whose prompts start at 1,000 tokens and grow 400 a step."""
    for _ in range(episodes):
        episode = make.episode(solver=player, status=Status.FINISHED, steps=0)
        Step.objects.bulk_create(
            [Step(episode=episode, index=0, observation="start")]
            + [Step(episode=episode, index=i, input_tokens=1000 + 400 * (i - 1),
                    output_tokens=120, reply="ACTION: x") for i in range(1, steps + 1)]
        )
        Episode.objects.filter(pk=episode.pk).update(steps=steps)


def test_a_duel_without_history_uses_the_defaults_and_says_so(make):
    a, b = priced(make, "claude-a"), priced(make, "claude-b")
    estimate = duel_projection(a=a, b=b, attempts=4)
    half = DEFAULT_STEP_LIMIT // 2
    assert estimate.calls_low == 2 * (1 + 8)
    assert estimate.calls_expected == 2 * (1 + 8 * half)
    assert estimate.calls_high == 2 * (2 + 8 * DEFAULT_STEP_LIMIT)
    assert 0 < estimate.cost_low < estimate.cost_expected < estimate.cost_high
    assert any("no stored steps" in note for note in estimate.assumptions)


def test_recent_token_counts_and_step_limits_shape_the_estimate(make):
    a, b = priced(make, "claude-a"), priced(make, "claude-b")
    with_history(make, b, steps=4)
    make.environment(author=a, max_steps=10)
    usage = player_usage(player=b)
    assert usage.measured and usage.first_prompt == 1000 and usage.growth == 400
    assert usage.reply == 120 and usage.mean_steps == 4
    estimate = duel_projection(a=a, b=b, attempts=2)
    # B solves A's environment (limit 10) in ~4 steps; A solves B's (default limit) from defaults.
    assert estimate.calls_expected == (1 + 4 * 4) + (1 + 4 * (DEFAULT_STEP_LIMIT // 2))
    assert estimate.calls_high == (2 + 4 * 10) + (2 + 4 * DEFAULT_STEP_LIMIT)


def test_caching_lowers_the_expected_cost_and_turning_it_off_raises_it(make):
    cached = duel_projection(a=priced(make, "c-a"), b=priced(make, "c-b"), attempts=4)
    plain = duel_projection(a=priced(make, "p-a", params={"cache": False}),
                            b=priced(make, "p-b", params={"cache": False}), attempts=4)
    assert cached.cost_expected < 0.5 * plain.cost_expected
    assert cached.cost_high == pytest.approx(plain.cost_high)  # worst case: no cache hits


def test_free_built_in_players_cost_nothing_but_their_calls_are_counted(make):
    estimate = tournament_projection(players=[make.player(), make.player(), make.player()],
                                     rounds=2, attempts=2)
    assert estimate.cost_high == 0 and estimate.calls_expected > 0
    assert estimate.calls_low == 3 * 2 * 2 * (1 + 4)  # pairs x rounds x sides x calls


def half_done_tournament(make, *, cost: float, prompt: int, cached: int) -> Tournament:
    """A running tournament: one finished duel (one episode), one pending."""
    a, b = priced(make, "claude-a"), priced(make, "claude-b")
    tournament = make.tournament(players=[a, b], status=Status.RUNNING, cost=cost)
    done = Duel.objects.create(tournament=tournament, a=a, b=b, attempts=1,
                               status=Status.FINISHED)
    Duel.objects.create(tournament=tournament, a=a, b=b, attempts=1, status=Status.PENDING)
    make.episode(duel=done, solver=b, input_tokens=prompt, cache_read_tokens=cached)
    return tournament


def test_tournament_spend_cached_share_and_projection(make):
    tournament = half_done_tournament(make, cost=0.42, prompt=10_000, cached=7_500)
    spend = tournament_spend(tournament=tournament)
    assert spend.spent == pytest.approx(0.42)
    assert spend.cached_share == pytest.approx(0.75)
    assert spend.remaining_duels == 1 and spend.remaining.calls_expected > 0
    low, expected, high = spend.projected_total
    assert 0.42 < low < expected < high


def test_tournament_page_shows_spend_cached_share_and_projection(make, owner_client):
    tournament = half_done_tournament(make, cost=1.5, prompt=8_000, cached=2_000)
    page = owner_client.get(f"/tournaments/{tournament.uuid}/").content.decode()
    assert "Spent $1.50" in page
    assert "25% of 8,000 prompt tokens read from the prompt cache" in page
    assert "projected at completion" in page and "for the 1 duel not finished" in page


def test_new_duel_form_estimates_without_starting_anything(make, owner_client):
    a, b = priced(make, "claude-a"), priced(make, "claude-b")
    response = owner_client.post("/duels/new/", {
        "a": a.uuid, "b": b.uuid, "attempts": 2, "estimate": "1"})
    assert response.status_code == 200
    page = response.content.decode()
    assert "Expected bill" in page and "model calls" in page.lower()
    assert Duel.objects.count() == 0
    bad = owner_client.post("/duels/new/", {"a": a.uuid, "b": a.uuid, "attempts": 2,
                                            "estimate": "1"})
    assert bad.status_code == 400 and "Pick two different players." in bad.content.decode()


def test_tournament_dry_run_prints_the_bill_and_creates_nothing(make):
    priced(make, "claude-a"), priced(make, "claude-b"), priced(make, "claude-c")
    out = io.StringIO()
    call_command("tournament", "--players", "claude-a,claude-b,claude-c", "--attempts", "2",
                 "--dry-run", stdout=out)
    text = out.getvalue()
    assert text.startswith("dry run: 3 duels,") and "nothing was created" in text
    assert Tournament.objects.count() == 0
    out = io.StringIO()
    call_command("tournament", "--players", "claude-a,claude-b", "--dry-run", "--json",
                 stdout=out)
    result = json.loads(out.getvalue())
    assert result["dry_run"] is True and result["duels"] == 1
    assert result["calls"]["low"] <= result["calls"]["expected"] <= result["calls"]["high"]
    assert result["cost"]["low"] <= result["cost"]["expected"] <= result["cost"]["high"]


def test_seconds_per_token_are_recovered_from_generated_latencies():
    rng = random.Random(58)
    for _ in range(200):
        prompt_rate, reply_rate = rng.uniform(50, 5000), rng.uniform(5, 200)
        samples = []
        for _ in range(rng.randrange(5, 60)):
            prompt, reply = rng.randrange(50, 8000), rng.randrange(1, 800)
            seconds = (prompt / prompt_rate + reply / reply_rate) * rng.uniform(0.98, 1.02)
            samples.append((prompt, reply, seconds))
        fitted = seconds_per_token(samples)
        assert fitted is not None
        # What an estimate needs: the time of calls like these, within the noise.
        errors = [abs(prompt * fitted[0] + reply * fitted[1] - seconds) / seconds
                  for prompt, reply, seconds in samples]
        assert sum(errors) / len(errors) < 0.05
        # Without noise, both rates exactly.
        exact = seconds_per_token([(p, r, p / prompt_rate + r / reply_rate)
                                   for p, r, _ in samples])
        assert exact[0] * prompt_rate == pytest.approx(1, rel=1e-6)
        assert exact[1] * reply_rate == pytest.approx(1, rel=1e-6)
    assert seconds_per_token([(10, 1, 0.1)]) is None  # too few to fit


def test_a_local_models_measured_rates_give_the_dry_runs_model_time(make):
    """A slow player (175 prompt and 40 reply tokens a second, as SmolLM2 on 2 cores): its
    steps' latencies give its rates, and the expected model time follows from them."""
    a, b = priced(make, "claude-a"), priced(make, "local-b", params={"cache": False})
    with_history(make, b, steps=4)
    for step in Step.objects.filter(episode__solver=b, index__gte=1):
        step.latency_ms = round((step.input_tokens / 175 + step.output_tokens / 40) * 1000)
        step.save(update_fields=["latency_ms"])
    usage = player_usage(player=b)
    assert usage.timed
    assert 1 / usage.prompt_seconds == pytest.approx(175, rel=0.01)
    assert 1 / usage.reply_seconds == pytest.approx(40, rel=0.01)
    estimate = duel_projection(a=a, b=b, attempts=1)
    b_plays = 2 * sum((1000 + 400 * i) / 175 + 120 / 40 for i in range(4))
    assert estimate.seconds_expected > b_plays  # B's plays, plus A's and both setters
    assert estimate.seconds_low < estimate.seconds_expected < estimate.seconds_high
    out = io.StringIO()
    call_command("tournament", "--players", "claude-a,local-b", "--attempts", "1",
                 "--dry-run", "--json", stdout=out)
    shown = json.loads(out.getvalue())["model_seconds"]
    assert shown["expected"] == round(estimate.seconds_expected)
    assert any("claude-a has no timed steps" in note for note in estimate.assumptions)
