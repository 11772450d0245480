"""Harbor task folders: every design of a curated set, one task per seed, unhinted and hinted.

    DIR/README.md                       what the tasks are and how to run them
    DIR/no-network.yaml                 the compose overlay that takes the network away (Docker)
    DIR/<slug>-<hash>-seed-<n>[-hint[-<level>]]/
        task.toml                       author, domain, design hash, seed, condition as metadata
        instruction.md                  how to play, the task statement (and the hint, hinted)
        environment/Dockerfile          FROM the base image (ARG BASE_IMAGE), nothing fetched
        environment/envduels/           harbor_play.py, EnvDuels' sandbox runner (a copy), and
                                        private/ (the design and its hints: root-only in the image)
        tests/test.sh                   replays the recorded actions from the seed: the reward
        solution/solve.sh               plays the reference solution (designs that have one)

A hinted variant per seed carries the hint in its instruction; a design with graded hints gets
one hinted variant per level. How the container keeps the source and the hints from the agent:
duels/trainers/rl_runtime/harbor_play.py. The reference actions and the task statement are
played here, in EnvDuels' own sandbox, while the folders are written.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from duels.exchange.identifiers import path_under
from duels.selectors.training_sets import TrainingItem
from duels.trainers.common import (
    PackageError,
    directory_write,
    installation_reference,
    markdown_text,
    sandbox_runner_vendor,
)
from duels.trainers.envduels_v1 import benchmark_seeds, privileged_hints
from sandbox_runner import SandboxError, open_sandbox

RUNTIME = Path(__file__).resolve().parent / "rl_runtime" / "harbor_play.py"
DEFAULT_SEEDS = (0, 1, 2, 3)
DEFAULT_MAX_STEPS = 30
AGENT_TIMEOUT_SECONDS = 1800
VERIFIER_TIMEOUT_SECONDS = 300
NO_NETWORK = "services:\n  main:\n    network_mode: none\n"


@dataclass(frozen=True)
class Played:
    """What the design gives for one seed, played here: its statement and reference actions."""

    statement: str
    reference: list[str] | None


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40] or "design"


def toml_string(value: object) -> str:
    """A TOML basic string (JSON's escapes are TOML's; DEL and lone surrogates are not)."""
    text = str(value if value is not None else "").encode("utf-8", "replace").decode("utf-8")
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _fence(text: str) -> str:
    """`text` in a fenced block no line of it can close."""
    runs = [len(run) for run in re.findall(r"`{3,}", text)]
    fence = "`" * max(3, *(run + 1 for run in runs)) if runs else "```"
    return f"{fence}text\n{text.rstrip()}\n{fence}"


def _play(item: TrainingItem, seeds: Sequence[int]) -> dict[int, Played]:
    """Each seed's task statement and reference actions, from the design run in the sandbox."""
    played = {}
    try:
        with open_sandbox(item.source, backend=settings.ENVDUELS_SANDBOX) as sandbox:
            for seed in seeds:
                statement = sandbox.reset(seed=seed)
                played[seed] = Played(statement=statement,
                                      reference=sandbox.reference_solution(seed))
    except SandboxError as error:
        raise PackageError(f"design {item.design[:12]} ({item.title!r}) could not be played "
                           f"here to write its tasks: {error}") from error
    return played


def _task_toml(*, name: str, item: TrainingItem, seed: int, level: int | None) -> str:
    author = item.author or "a person"
    condition = "unhinted" if level is None else "hinted"
    lines = [
        'schema_version = "1.4"', "",
        "[task]", f"name = {toml_string('envduels/' + name)}",
        f"description = {toml_string(f'{item.title} (EnvDuels design {item.design[:12]}, seed {seed}, {condition})')}",  # noqa: E501
        f"authors = [{{name = {toml_string(author)}}}]",
        f"keywords = [\"envduels\", {toml_string(item.family or 'general')}]", "",
        "[metadata]",
        f"author = {toml_string(author)}",
        f"domain = {toml_string(item.family or 'general')}",
        f"design = {toml_string(item.design)}",
        f"content_hash = {toml_string(item.content_hash)}",
        f"environment = {toml_string(item.environment)}",
        f"title = {toml_string(item.title)}",
        f"seed = {seed}",
        f"condition = {toml_string(condition)}",
        *([f"hint_level = {level}"] if level is not None else []),
        f"max_steps = {int(item.max_steps or DEFAULT_MAX_STEPS)}",
        'generator = "EnvDuels"', "",
        "[agent]", f"timeout_sec = {float(AGENT_TIMEOUT_SECONDS)}",
        '# The agent plays as this unprivileged user: the design and its hints are root\'s.',
        'user = "agent"', "",
        "[verifier]", f"timeout_sec = {float(VERIFIER_TIMEOUT_SECONDS)}",
        '# The verifier replays what the agent played in the agent\'s container, as root.',
        'environment_mode = "shared"', "",
        "[environment]", "build_timeout_sec = 600.0",
        "# Nothing in the container needs a network; take it away where the backend can",
        "# (local Docker: --extra-docker-compose no-network.yaml beside the task folders).",
        'network_mode = "public"', "",
    ]
    return "\n".join(lines)


def _instruction(*, item: TrainingItem, played: Played, hint: str | None) -> str:
    max_steps = int(item.max_steps or DEFAULT_MAX_STEPS)
    parts = [
        f"# {markdown_text(item.title)}", "",
        "You are playing an interactive text environment through one command:", "",
        "- `play --reset` prints the task statement again (it does not start over);",
        '- `play "<action>"` sends one action and prints the environment\'s answer.', "",
        f"You have at most {max_steps} actions in one attempt; the attempt is over when the "
        "environment says so (`play` then prints `[the episode is over]`). You pass when the "
        "environment reports success: the actions you sent are replayed from the start to "
        "check it. Nothing else in the container is part of the task.", "",
        "## The task statement", "", _fence(played.statement),
    ]
    if hint is not None:
        parts += ["", "## A hint", "", "The environment's author wrote this hint for you:", "",
                  _fence(hint)]
    return "\n".join(parts) + "\n"


def _dockerfile(base_image: str) -> str:
    return (
        "# An EnvDuels design as a Harbor task (generated by EnvDuels). Nothing is fetched:\n"
        "# any image with Python 3.10+ will do as the base (--build-arg BASE_IMAGE=...).\n"
        f"ARG BASE_IMAGE={base_image}\n"
        "FROM ${BASE_IMAGE}\n"
        "USER root\n"
        "COPY envduels /opt/envduels\n"
        "RUN python3 -S -I /opt/envduels/harbor_play.py install\n"
        "ENV PYTHONDONTWRITEBYTECODE=1\n"
        "WORKDIR /home/agent\n"
        'ENTRYPOINT ["python3", "-S", "-I", "/opt/envduels/harbor_play.py", "entrypoint"]\n'
        'CMD ["sleep", "infinity"]\n'
    )


TEST_SH = """#!/bin/sh
# Replays the agent's recorded actions from the task's seed in a fresh process and writes the
# reward (1 on success, else 0) to /logs/verifier/reward.txt.
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
exec python3 -S -I /opt/envduels/harbor_play.py verify
"""


def _solve_sh(actions: list[str]) -> str:
    lines = ["#!/bin/sh", "# The design's reference solution for this seed, played through `play`.",
             "set -e", "play --reset"]
    lines += [f"play {shlex.quote(action)}" for action in actions]
    return "\n".join(lines) + "\n"


def _variants(item: TrainingItem) -> list[tuple[str, int | None, str | None]]:
    """(folder suffix, hint level, hint text): unhinted, then one hinted variant per level."""
    hints = privileged_hints(item)
    variants: list[tuple[str, int | None, str | None]] = [("", None, None)]
    if "hint_1" in hints:
        variants += [("-hint-1", 1, hints["hint_1"]), ("-hint-2", 2, hints["hint_2"])]
    elif "hint" in hints:
        variants.append(("-hint", 1, hints["hint"]))
    return variants


def _write_task(root: Path, *, name: str, item: TrainingItem, seed: int, played: Played,
                level: int | None, hint: str | None, base_image: str) -> None:
    folder = path_under(root, name)
    runtime = folder / "environment" / "envduels"
    (runtime / "private").mkdir(parents=True)
    (folder / "tests").mkdir()
    shutil.copyfile(RUNTIME, runtime / "harbor_play.py")
    sandbox_runner_vendor(into=runtime)
    (runtime / "private" / "design.json").write_text(json.dumps(
        {"design": item.design, "title": item.title, "seed": seed, "source": item.source,
         "max_steps": int(item.max_steps or DEFAULT_MAX_STEPS)}, ensure_ascii=False),
        encoding="utf-8")
    (runtime / "private" / "privileged.json").write_text(json.dumps(
        {"environment_id": item.design, "hints": privileged_hints(item)}, ensure_ascii=False,
        indent=1), encoding="utf-8")
    (folder / "environment" / "Dockerfile").write_text(_dockerfile(base_image))
    (folder / "task.toml").write_text(_task_toml(name=name, item=item, seed=seed, level=level),
                                      encoding="utf-8")
    (folder / "instruction.md").write_text(_instruction(item=item, played=played, hint=hint),
                                           encoding="utf-8")
    (folder / "tests" / "test.sh").write_text(TEST_SH)
    (folder / "tests" / "test.sh").chmod(0o755)
    if played.reference:
        (folder / "solution").mkdir()
        (folder / "solution" / "solve.sh").write_text(_solve_sh(played.reference),
                                                      encoding="utf-8")
        (folder / "solution" / "solve.sh").chmod(0o755)


def _readme(names: list[str], items: Sequence[TrainingItem], base_image: str) -> str:
    lines = [
        "# EnvDuels designs as Harbor tasks", "",
        f"{len(names)} tasks from {len(items)} designs chosen by training value: one per design "
        "and seed, unhinted, and a hinted variant of each (one per level for graded hints). "
        "The agent plays through `play` inside the container; the design's source and hints "
        "are readable only by root there; `tests/test.sh` replays the agent's actions from the "
        "seed and writes the reward (1 on success, else 0); `solution/solve.sh` plays the "
        "reference solution where the design has one.", "",
        f"The images build FROM `{base_image}` (ARG BASE_IMAGE in each Dockerfile; any image "
        "with Python 3.10+ works) and fetch nothing. Nothing in them needs a network: on local "
        "Docker take it away with the overlay beside this file:", "",
        "    harbor run -p TASK_FOLDER -a oracle --extra-docker-compose no-network.yaml -o jobs",
        "", f"Written by the EnvDuels installation at {installation_reference()}.", "",
        "| design | title | author | domain |", "| --- | --- | --- | --- |",
    ]
    for item in items:
        lines.append(f"| `{item.design[:12]}` | {markdown_text(item.title)} | "
                     f"{markdown_text(item.author or 'a person')} | "
                     f"{markdown_text(item.family or 'general')} |")
    return "\n".join(lines) + "\n"


def harbor_write(*, items: Sequence[TrainingItem], out: Path,
                 base_image: str | None = None) -> Path:
    """Write the Harbor tasks of `items` under `out` (a new directory); return `out`."""
    if not items:
        raise PackageError("the training set is empty: no design has a training value under "
                           "these filters (run `manage.py analytics --refresh` after duels)")
    base_image = base_image or settings.ENVDUELS_SANDBOX_IMAGE

    def fill(root: Path) -> None:
        names: list[str] = []
        for item in items:
            seeds = benchmark_seeds(item) or list(DEFAULT_SEEDS)
            played = _play(item, seeds)
            for seed in seeds:
                for suffix, level, hint in _variants(item):
                    name = f"{_slug(item.title)}-{item.design[:12]}-seed-{seed}{suffix}"
                    _write_task(root, name=name, item=item, seed=seed, played=played[seed],
                                level=level, hint=hint, base_image=base_image)
                    names.append(name)
        (root / "no-network.yaml").write_text(NO_NETWORK)
        (root / "README.md").write_text(_readme(names, items, base_image), encoding="utf-8")

    return directory_write(out=out, fill=fill)
