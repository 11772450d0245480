"""The verifiers taskset of the setter's seat: a small package that asks a running
`serve_envs --role setter` server for the setter prompt and for each answer's reward.

It holds no design and needs no EnvDuels: only `verifiers` and the server's address (the
default baked in at export, `--env.taskset.server` to point elsewhere).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from duels.trainers.common import directory_write, installation_reference
from duels.trainers.rl_packages import DEPENDENCIES, RUNTIME, package_module_name


def setter_taskset_write(*, out: Path, name: str, server: str) -> Path:
    """Write the taskset package at `out` (a new directory); return `out`."""
    module = package_module_name(name)

    def fill(staging: Path) -> None:
        package = staging / module
        package.mkdir()
        shutil.copyfile(RUNTIME / "verifiers_setter_env.py", package / "verifiers_setter_env.py")
        (package / "server.py").write_text(
            '"""Where the setter seat is served (set at export)."""\n\n'
            f"DEFAULT_SERVER = {server!r}\n", encoding="utf-8")
        (package / "__init__.py").write_text(
            f'"""{module}: the setter seat of EnvDuels for verifiers (generated)."""\n\n'
            "from .verifiers_setter_env import SetterSeatEnv, SetterSeatTaskset\n\n"
            '__all__ = ["SetterSeatEnv", "SetterSeatTaskset"]\n', encoding="utf-8")
        dependencies = ", ".join(DEPENDENCIES["verifiers"])
        (staging / "pyproject.toml").write_text(
            '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = '
            '"setuptools.build_meta"\n\n[project]\n'
            f'name = "{module.replace("_", "-")}"\nversion = "0.1.0"\n'
            'description = "The setter seat of EnvDuels as a verifiers taskset"\n'
            f'readme = "README.md"\nrequires-python = ">=3.11"\n'
            f"dependencies = [{dependencies}]\n\n"
            f'[tool.setuptools]\npackages = ["{module}"]\n', encoding="utf-8")
        (staging / "README.md").write_text(
            f"# {module}\n\nThe setter's seat of EnvDuels as a `verifiers` taskset: the model "
            "writes a whole environment and hint; a running `manage.py serve_envs --role setter` "
            "server measures it with its solvers and the reward `setter_score` is the answer's "
            "setter score (an error, never a reward, when the server cannot measure it).\n\n"
            f"```sh\npip install .\nvf-eval {module} --env.taskset.server {server} "
            "--env.taskset.rollouts 8 -m MODEL --client.base-url URL\n```\n\n"
            f"Written by the EnvDuels installation at {installation_reference()}.\n",
            encoding="utf-8")

    return directory_write(out=out, fill=fill)
