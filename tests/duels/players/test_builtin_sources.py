"""Every built-in environment family's source keeps the environment contract, in the sandbox."""

from __future__ import annotations

import random

import pytest

from duels.players.scripted import FAMILIES
from tests.helpers.parts import need

DIFFICULTIES = (1, 2, 3, 4, 5)


def backends() -> list[str]:
    try:
        from sandbox_runner import available_backends
    except ImportError:
        return []
    return list(available_backends())


def generated(family: str, difficulty: int, author_seed: int = 0):
    return FAMILIES[family].generate(
        difficulty=difficulty, rng=random.Random(f"{family}:{difficulty}:{author_seed}")
    )


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_sources_keep_the_contract_in_the_sandbox(family):
    """Deterministic reset, hint kept out, junk tolerated, reference solves seeds in budget."""
    working = backends()
    need(bool(working), "no sandbox backend (docker, bwrap or unshare) works here")
    from sandbox_runner import open_sandbox

    # The quickest to answer a step; the next test runs the sources on every backend.
    backend = "bwrap" if "bwrap" in working else working[0]
    for difficulty in DIFFICULTIES:
        env = generated(family, difficulty, author_seed=1)
        assert len(env.source.encode()) <= 64 * 1024
        with open_sandbox(env.source, backend=backend) as sandbox:
            assert 1 <= sandbox.max_steps <= 200
            for seed in range(6):
                first = sandbox.reset(seed=seed)
                assert first == sandbox.reset(seed=seed)
                assert env.hint not in first
                junk = sandbox.step("xyzzy \u2603 " * 3)
                assert isinstance(junk.observation, str) and not junk.success
                actions = sandbox.reference_solution(seed)
                assert actions and len(actions) <= sandbox.max_steps
                sandbox.reset(seed=seed)
                results = [sandbox.step(action) for action in actions]
                assert results[-1].done and results[-1].success, (env.title, seed)
                assert not any(r.done for r in results[:-1])


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_sources_pass_validation_on_every_backend(family):
    """Every difficulty on the quickest backend; on each other one the hardest, which does the
    most work within the same limits (a family's difficulties share its code and differ in
    their parameters only, so what a backend changes - its Python, how its limits count - shows
    there)."""
    working = backends()
    need(bool(working), "no sandbox backend (docker, bwrap or unshare) works here")
    try:
        from duels.engine.validation import environment_validation_report
    except ImportError:
        need(False, "duels.engine.validation.environment_validation_report is not available")
    quickest = "bwrap" if "bwrap" in working else working[0]
    for backend in working:
        for difficulty in DIFFICULTIES if backend == quickest else DIFFICULTIES[-1:]:
            env = generated(family, difficulty)
            report = environment_validation_report(
                source=env.source, hint_texts=[env.hint], backend=backend
            )
            failed = [c for c in report["checks"] if not c.get("passed")]
            assert report["valid"], (backend, env.title, failed)
