"""RL-trainer packages of a curated training set: `verifiers` (the v1 stack, 0.4), Gymnasium and
TRL (an `environment_factory` class).

Each package is a directory with a pyproject, a README naming every design's author, figures and
content hash, the designs (designs.json) and the modules of `duels/trainers/rl_runtime`, which
run the model-written code only through EnvDuels' sandbox runner. The directory is written next
to its destination and moved into place whole, so a failed export leaves nothing behind.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path

from duels.selectors.training_sets import TrainingItem
from duels.trainers.common import (
    PackageError,
    directory_write,
    installation_reference,
    installation_requirement,
    markdown_text,
)
from duels.words.units import hint_gain_interval_text, hint_gain_text

PACKAGE_FORMATS = ("verifiers", "gymnasium", "trl")
INSTALL_ASK = "envduels @ <the path or URL of the EnvDuels installation that wrote this>"
RUNTIME = Path(__file__).with_name("rl_runtime")
# EnvDuels itself is never a dependency by bare name (whoever registered that name on a package
# index would run code on every trainer): the README gives the pinned install of the EnvDuels
# installation that wrote the package, a manual step.
DEPENDENCIES = {
    "verifiers": ['"verifiers>=0.4,<0.5"'],
    "gymnasium": ['"gymnasium>=1.0,<2"'],
    "trl": ['"trl>=1.16,<2"', '"datasets>=3.3"'],
}
FRONT_END = {"verifiers": "verifiers_env.py", "gymnasium": "gymnasium_env.py",
             "trl": "trl_env.py"}
INIT = {
    "verifiers": 'from .verifiers_env import EnvDuelsEnv, EnvDuelsTaskset\n\n'
                 '__all__ = ["EnvDuelsEnv", "EnvDuelsTaskset"]\n',
    "gymnasium": 'from .gymnasium_env import EnvDuelsEnv, register_all\n\nENV_IDS = register_all()'
                 '\n\n__all__ = ["ENV_IDS", "EnvDuelsEnv", "register_all"]\n',
    "trl": 'from .trl_env import EnvDuelsTRLEnv, dataset_rows\n\n'
           '__all__ = ["EnvDuelsTRLEnv", "dataset_rows"]\n',
}


__all__ = ["PACKAGE_FORMATS", "PackageError", "package_module_name", "rl_package_write"]


def package_module_name(name: str) -> str:
    """A Python module name for `name` (what verifiers imports for the taskset id)."""
    module = re.sub(r"[^a-z0-9_]+", "_", name.lower().replace("-", "_")).strip("_")
    if not module or module[0].isdigit():
        module = f"envduels_{module}"
    return module


def _design_id(item: TrainingItem, taken: set[str]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", item.title.lower()).strip("-")[:40] or "design"
    name = f"{slug}-{item.design[:8]}"
    while name in taken:  # two designs sharing a title and a hash prefix
        name += "x"
    taken.add(name)
    return name


def _figure(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _readme(name: str, module: str, package_format: str, designs: list[dict], *,
            installation: bool = True) -> str:
    usage = {
        "verifiers": f"vf-eval {module} --env.taskset.use-hint false -m MODEL "
                     "--client.base-url URL",
        "gymnasium": f'import gymnasium as gym\nimport {module}\n'
                     f'env = gym.make({module}.ENV_IDS[0])\nobs, info = env.reset(seed=0)',
        "trl": f"from datasets import Dataset\nfrom trl import GRPOConfig, GRPOTrainer\n"
               f"from {module} import EnvDuelsTRLEnv, dataset_rows\n"
               "trainer = GRPOTrainer(model=MODEL, args=GRPOConfig(...), "
               "train_dataset=Dataset.from_list(dataset_rows(seeds=4)), "
               "environment_factory=EnvDuelsTRLEnv)",
    }[package_format]
    lines = [
        f"# {markdown_text(name)}", "",
        f"{len(designs)} environment designs from EnvDuels, chosen by training value, as a "
        f"`{package_format}` package.", "",
        "The environment code was written by models. It runs only inside EnvDuels' sandbox "
        "runner (docker, bwrap or unshare). With no working sandbox backend the package "
        "refuses to start (SandboxUnavailable).", "",
        "## Install (one manual step)", "",
        "This package imports EnvDuels for its sandbox runner, and does not name EnvDuels as a "
        "dependency: install it yourself, from the installation that wrote this package "
        + (f"({installation_reference()})" if installation else
           "(its operators give you its path or URL)")
        + ", never by its bare name from a package index:", "",
        "```sh", f"pip install '{installation_requirement() if installation else INSTALL_ASK}'",
        "pip install .", "```", "",
        "```sh" if package_format == "verifiers" else "```python", usage, "```", "",
        "| design | title | author | training value | p_u | p_h | hint gain [95%] | "
        "difficulty b | hint effect γ | content hash |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for item in designs:
        f = item["figures"]
        title = markdown_text(item["title"])
        author = markdown_text(item["author"] or "a person")
        lines.append(
            f"| `{item['id']}` | {title} | {author} | {_figure(f.get('value'), 3)} | "
            f"{_figure(f.get('p_unhinted'))} | {_figure(f.get('p_hinted'))} | "
            f"{hint_gain_text(f.get('hint_gain'))} "
            f"{hint_gain_interval_text(f.get('gain_low'), f.get('gain_high'))} | "
            f"{_figure(f.get('difficulty'))} | "
            f"{_figure(f.get('hint_effect'))} | `{item['content_hash']}` |")
    lines += ["", "Figures are defined on EnvDuels' /glossary/ page (training value: "
              "docs/flywheel.md in EnvDuels).", ""]
    return "\n".join(lines)


def rl_package_write(*, items: Sequence[TrainingItem], package_format: str, out: Path,
                     name: str = "envduels-set", installation: bool = True) -> Path:
    """Write the package for `items` at `out` (a new directory); return `out`. Without
    `installation` (a download from the web) the README does not name this installation's
    path and commit, which only its operators need to give out."""
    if package_format not in PACKAGE_FORMATS:
        raise PackageError(f"unknown package format {package_format!r}; use {PACKAGE_FORMATS}")
    if not items:
        raise PackageError("the training set is empty: no design has a training value under "
                           "these filters (run `manage.py analytics --refresh` after duels)")
    module = package_module_name(name)
    taken: set[str] = set()
    designs = [
        {"id": _design_id(item, taken), "title": item.title, "author": item.author,
         "family": item.family, "environment": item.environment, "design": item.design,
         "content_hash": item.content_hash, "max_steps": item.max_steps, "hint": item.hint,
         "cluster": item.cluster, "source": item.source, "figures": item.training}
        for item in items
    ]
    def fill(staging: Path) -> None:
        package = staging / module
        package.mkdir()
        for filename in ("designs.py", FRONT_END[package_format]):
            shutil.copyfile(RUNTIME / filename, package / filename)
        (package / "__init__.py").write_text(
            f'"""{module}: EnvDuels designs for {package_format} (generated)."""\n\n'
            + INIT[package_format], encoding="utf-8")
        (package / "designs.json").write_text(json.dumps(
            {"format": f"envduels.{package_format}.v1", "designs": designs},
            ensure_ascii=False, indent=1), encoding="utf-8")
        dependencies = ", ".join(DEPENDENCIES[package_format])
        (staging / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = '
            '"setuptools.build_meta"\n\n[project]\n'
            f'name = "{module.replace("_", "-")}"\nversion = "0.1.0"\n'
            f'description = "EnvDuels designs as a {package_format} package"\n'
            f'readme = "README.md"\nrequires-python = ">=3.11"\n'
            f"dependencies = [{dependencies}]\n\n"
            f'[tool.setuptools]\npackages = ["{module}"]\n\n'
            f'[tool.setuptools.package-data]\n"{module}" = ["designs.json"]\n',
            encoding="utf-8")
        (staging / "README.md").write_text(_readme(name, module, package_format, designs,
                                                   installation=installation),
                                           encoding="utf-8")

    return directory_write(out=out, fill=fill)
