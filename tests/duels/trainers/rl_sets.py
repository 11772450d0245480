"""A small curated set with stored training values, for the RL-package tests."""

from __future__ import annotations

from django.utils import timezone

from duels.analytics.designs import content_hash as design_key
from duels.analytics.training_value import training_components
from duels.models import EnvironmentEstimate

# "Say the number": the target is seed % modulus; the reference solution says it.
SOURCE = '''
class Environment:
    max_steps = 4

    def reset(self, seed):
        self.target = str(seed % {modulus})
        self.turns = 0
        return "Say the number " + self.target + "."

    def step(self, action):
        self.turns += 1
        ok = action.strip() == self.target
        return {{"observation": "yes" if ok else "no, say it again", "done": ok,
                 "success": ok, "reward": 1.0 if ok else 0.0}}

    def reference_solution(self, seed):
        return [str(seed % {modulus})]
'''


def make_rl_set(make, *, count: int = 2) -> list:
    """`count` designs (one environment each), each with a hint and a stored training value."""
    environments = []
    for number in range(count):
        source = SOURCE.format(modulus=3 + number)
        env = make.environment(title=f"Say the number {number}", source=source, max_steps=4)
        make.hint(environment=env, text="Say exactly the number in the task.")
        parts = training_components(p_unhinted=0.25, gain_low=0.2 + number / 10,
                                    difficulty=0.5, hint_effect=1.5)
        value = parts.pop("value")
        training = {"design": design_key(source), "environments": [str(env.uuid)],
                    "title": env.title, "authors": [env.author.name], "p_unhinted": 0.25,
                    "p_hinted": 0.75, "hint_gain": 0.5, "gain_low": 0.2 + number / 10,
                    "gain_high": 0.8, "difficulty": 0.5, "hint_effect": 1.5, "episodes": 16,
                    "value": value, "components": parts, "reason": ""}
        EnvironmentEstimate.objects.create(environment=env, difficulty=0.5, hint_effect=1.5,
                                           episodes=16, training_value=value,
                                           training=training, computed_at=timezone.now())
        environments.append(env)
    return environments
