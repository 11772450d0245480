"""Builders for test data. Every builder takes keyword overrides."""

from __future__ import annotations

import itertools

from django.utils import timezone

from duels.models import (
    Condition,
    Duel,
    Environment,
    EnvironmentStatus,
    Episode,
    Hint,
    Player,
    Provider,
    Status,
    Step,
    Tournament,
)

_counter = itertools.count(1)

TRIVIAL_SOURCE = '''
class Environment:
    max_steps = 5

    def reset(self, seed):
        self.target = str(seed % 3)
        return "Say the number " + self.target + "."

    def step(self, action):
        ok = action.strip() == self.target
        reward = 1.0 if ok else 0.0
        return {"observation": "yes" if ok else "no", "done": ok, "success": ok, "reward": reward}

    def reference_solution(self, seed):
        return [str(seed % 3)]
'''


def player(**overrides) -> Player:
    n = next(_counter)
    fields = {
        "name": f"player-{n}",
        "provider": Provider.BUILTIN,
        "model": "scripted-test",
        "builtin": True,
        "params": {"setter_style": "safe", "solver_skill": "greedy", "seed": n},
    }
    fields.update(overrides)
    if fields["provider"] != Provider.BUILTIN:
        fields.setdefault("builtin", False)
        if fields["builtin"] is True and "builtin" not in overrides:
            fields["builtin"] = False
    return Player.objects.create(**fields)


def environment(**overrides) -> Environment:
    n = next(_counter)
    fields = {
        "title": f"Environment {n}",
        # A comment of its own: each built environment is its own design unless a test shares
        # a source on purpose.
        "source": TRIVIAL_SOURCE + f"# environment {n}\n",
        "status": EnvironmentStatus.VALID,
        "max_steps": 5,
        "validation": {"valid": True, "checks": []},
    }
    fields.update(overrides)
    if "author" not in fields:
        fields["author"] = player()
    return Environment.objects.create(**fields)


def hint(**overrides) -> Hint:
    fields = {"text": "The number is the seed modulo three."}
    fields.update(overrides)
    if "environment" not in fields:
        fields["environment"] = environment()
    if "author" not in fields:
        fields["author"] = fields["environment"].author
    return Hint.objects.create(**fields)


def episode(*, steps: int = 0, **overrides) -> Episode:
    """An episode; with `steps`, that many stored steps after the reset step 0."""
    fields = {"seed": 0, "status": Status.FINISHED, "success": False}
    fields.update(overrides)
    if "environment" not in fields:
        fields["environment"] = environment()
    if "solver" not in fields:
        fields["solver"] = player()
    fields.setdefault("condition", Condition.HINTED if fields.get("hint") else Condition.UNHINTED)
    fields.setdefault("started_at", timezone.now())
    if fields["status"] == Status.FINISHED:
        fields.setdefault("finished_at", timezone.now())
    ep = Episode.objects.create(**fields)
    if steps:
        step_rows(ep, count=steps)
    return ep


def step_rows(ep: Episode, *, count: int) -> list[Step]:
    """Store the reset step and `count` action steps on `ep`."""
    rows = [Step(episode=ep, index=0, observation="Say the number 0.")]
    for index in range(1, count + 1):
        last = index == count
        rows.append(
            Step(
                episode=ep,
                index=index,
                observation="yes" if last and ep.success else "no",
                reply=f"I will try {index}.\nACTION: {index}",
                action=str(index),
                reward=0.0,
                done=last,
                success=bool(last and ep.success),
                latency_ms=5,
                input_tokens=10,
                output_tokens=4,
            )
        )
    Step.objects.bulk_create(rows)
    Episode.objects.filter(pk=ep.pk).update(steps=count)
    ep.steps = count
    return rows


def tournament(**overrides) -> Tournament:
    fields = {"name": f"Tournament {next(_counter)}", "rounds": 1, "attempts": 2}
    fields.update(overrides)
    players = fields.pop("players", None)
    t = Tournament.objects.create(**fields)
    if players:
        t.players.set(players)
    return t


def finished_duel(*, a: Player | None = None, b: Player | None = None, attempts: int = 2,
                  unhinted_a=(False, False), hinted_a=(True, True),
                  unhinted_b=(True, False), hinted_b=(True, False),
                  env_a: Environment | None = None, env_b: Environment | None = None,
                  **overrides) -> Duel:
    """A finished duel with environments, hints and episodes whose results are given per seed.

    Side "a" is A's environment solved by B. Stored scores are computed here the plain way, so
    tests can compare them with the engine's own scoring. `env_a`/`env_b` replay an existing
    environment (a copy of a design) instead of writing a new one.
    """
    a = a or player()
    b = b or player()
    env_a = env_a or environment(author=a)
    env_b = env_b or environment(author=b)
    hint_a = hint(environment=env_a, author=a)
    hint_b = hint(environment=env_b, author=b)
    duel = Duel.objects.create(
        a=a, b=b, env_a=env_a, env_b=env_b, hint_a=hint_a, hint_b=hint_b, attempts=attempts,
        status=Status.FINISHED, started_at=timezone.now(), finished_at=timezone.now(),
        **overrides,
    )
    sides = {}
    for side, env, h, solver, unhinted, hinted in (
        ("a", env_a, hint_a, b, unhinted_a, hinted_a),
        ("b", env_b, hint_b, a, unhinted_b, hinted_b),
    ):
        for seed in range(attempts):
            episode(duel=duel, environment=env, solver=solver, seed=seed, success=unhinted[seed],
                    steps=1)
            episode(duel=duel, environment=env, solver=solver, seed=seed, hint=h,
                    condition=Condition.HINTED, success=hinted[seed], steps=1)
        p_u = sum(unhinted) / attempts
        p_h = sum(hinted) / attempts
        flips = sum(1 for u, h_ in zip(unhinted, hinted, strict=True) if not u and h_)
        sides[side] = (p_u, p_h, p_h * (1 - p_u), flips)
    duel.p_unhinted_a, duel.p_hinted_a, duel.setter_score_a, duel.flips_a = sides["a"]
    duel.p_unhinted_b, duel.p_hinted_b, duel.setter_score_b, duel.flips_b = sides["b"]
    if sides["a"][2] > sides["b"][2]:
        duel.outcome = "a"
    elif sides["b"][2] > sides["a"][2]:
        duel.outcome = "b"
    else:
        duel.outcome = "draw"
    duel.save()
    return duel
