"""The envduels-v1 export: the manifest and files the original harness's readers expect, and a
class that plays each design in the sandbox runner (bare and boxed actions), refusing to run it
in-process unless ENVDUELS_ALLOW_IN_PROCESS=1."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from sandbox_runner import available_backends
from tests.duels.trainers.rl_sets import make_rl_set
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.parts import need

pytestmark = pytest.mark.django_db

ID_PATTERN = re.compile(r"^environments/[a-z0-9._-]+/env_\d{3}/[0-9a-f]{12}$")


@pytest.fixture
def export(make, tmp_path, settings):
    backends = available_backends()
    if backends:
        settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]
    environments = make_rl_set(make)
    author = make.player(name="qwen3.8-27b")
    environments[0].author = author
    environments[0].save(update_fields=["author"])
    make.finished_duel(env_a=environments[0], a=author, attempts=3,
                       unhinted_a=(False, False, True), hinted_a=(True, True, True),
                       unhinted_b=(False,) * 3, hinted_b=(False,) * 3)
    out = tmp_path / "export"
    call_command("export", "--format", "envduels-v1", "--out", str(out))
    return out, environments


def load_class(root: Path, row: dict):
    """Load a row's class the way the format's readers do: its file's bytes, checked, exec'd."""
    source = root / row["source"]
    code = source.read_bytes()
    assert hashlib.sha256(code).hexdigest() == row["source_sha256"]
    name = "envduels_export_" + row["source_sha256"]
    spec = importlib.util.spec_from_file_location(name, source)
    module = importlib.util.module_from_spec(spec)
    exec(compile(code, str(source), "exec"), module.__dict__)
    return getattr(module, row["class_name"])


def test_manifest_rows_name_hashed_sources_hints_and_benchmark_seeds(export):
    out, environments = export
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format_version"] == 1
    rows = manifest["environments"]
    assert len(rows) == 2 and len({row["id"] for row in rows}) == 2
    by_env = {row["environment"]: row for row in rows}
    for env in environments:
        row = by_env[str(env.uuid)]
        assert ID_PATTERN.match(row["id"]), row["id"]
        assert row["id"].endswith("/" + row["design"][:12])
        assert row["source"] == row["id"] + "/environment.py"
        assert hashlib.sha256((out / row["source"]).read_bytes()).hexdigest() == \
            row["source_sha256"]
        assert row["class_name"] == "EnvDuelsEnv" and row["max_turns"] == 4
        assert isinstance(row["domain"], str) and row["domain"]
        privileged = json.loads((out / row["privileged"]).read_text())
        assert privileged == {"environment_id": row["id"],
                              "hints": {"hint": "Say exactly the number in the task."}}
        assert (out / "_envduels" / "sandbox_runner" / "guest").is_dir()
    first = by_env[str(environments[0].uuid)]
    assert first["id"].startswith("environments/qwen3.8-27b/env_001/")
    metadata = json.loads((out / first["metadata"]).read_text())
    assert metadata["environment_id"] == first["id"]
    assert metadata["benchmark_seeds"] == [0, 1, 2] == first["benchmark_seeds"]
    other = by_env[str(environments[1].uuid)]
    assert json.loads((out / other["metadata"]).read_text())["benchmark_seeds"] == []


def test_the_class_plays_bare_and_boxed_actions_in_a_sandbox(export):
    need(sandbox_works(), "no sandbox backend works here")
    out, environments = export
    rows = json.loads((out / "manifest.json").read_text())["environments"]
    row = next(r for r in rows if r["environment"] == str(environments[0].uuid))
    cls = load_class(out, row)
    env = cls(max_turns=row["max_turns"])
    observation, info = env.reset(seed=7)
    assert observation == "Say the number 1." and info["seed"] == 7
    assert info["backend"] in {"docker", "bwrap", "unshare"}
    assert env.step(r"\boxed{2}") == ("no, say it again", 0.0, False, False,
                                      {"success": False, "done": False, "env_reward": 0.0,
                                       "turns": 1})
    observation, reward, terminated, truncated, info = env.step(r"I think \boxed{1}")
    assert (observation, reward, terminated, truncated) == ("yes", 1.0, True, False)
    assert info["success"] and info["env_reward"] == 1.0
    with pytest.raises(RuntimeError, match="reset"):
        env.step("1")
    # A bare action works too; seeds as large as 2**63 - 1 reach the environment.
    observation, _ = env.reset(seed=2**63 - 1)
    assert observation == f"Say the number {(2**63 - 1) % 3}."
    assert env.step(str((2**63 - 1) % 3))[1:3] == (1.0, True)
    # Running out of turns truncates: two instances never share an episode.
    first, second = cls(max_turns=2), cls(max_turns=2)
    first.reset(seed=0)
    second.reset(seed=0)
    assert first.step("9")[2:4] == (False, False)
    assert first.step("9")[1:4] == (0.0, False, True)
    assert second.step("0")[1:3] == (1.0, True)


def _run_outside(out: Path, environment: dict[str, str], row: dict) -> subprocess.CompletedProcess:
    """Load and play the class in a plain Python without site-packages (no EnvDuels, no Django)."""
    script = (
        "import json, sys, importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('m', {str(out / row['source'])!r})\n"
        "module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)\n"
        f"env = module.{row['class_name']}(max_turns=3)\n"
        "obs, info = env.reset(seed=4)\n"
        "print(json.dumps([obs, info['backend'], env.step(r'\\boxed{1}')[1]]))\n")
    return subprocess.run([sys.executable, "-S", "-c", script], capture_output=True, text=True,
                          timeout=120, cwd=out.parent, env={"PATH": "/usr/bin:/bin",
                                                             **environment})


def test_without_envduels_the_vendored_runner_sandboxes_and_nothing_runs_in_process(export):
    need(sandbox_works(), "no sandbox backend works here")
    out, environments = export
    rows = json.loads((out / "manifest.json").read_text())["environments"]
    row = next(r for r in rows if r["environment"] == str(environments[0].uuid))
    backend = "bwrap" if "bwrap" in available_backends() else available_backends()[0]
    done = _run_outside(out, {"ENVDUELS_SANDBOX": backend}, row)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ["Say the number 1.", backend, 1.0]
    # A backend that cannot run here: the class refuses, and names the opt-in.
    refused = _run_outside(out, {"ENVDUELS_SANDBOX": "docker",
                                 "ENVDUELS_SANDBOX_IMAGE": "envduels-missing:none"}, row)
    assert refused.returncode != 0
    assert "ENVDUELS_ALLOW_IN_PROCESS=1" in refused.stderr and "unsafe" in refused.stderr
    # No runner at all: refused too, unless the user opts in explicitly.
    shutil.rmtree(out / "_envduels")
    refused = _run_outside(out, {}, row)
    assert refused.returncode != 0 and "sandbox runner is missing" in refused.stderr
    allowed = _run_outside(out, {"ENVDUELS_ALLOW_IN_PROCESS": "1"}, row)
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout) == ["Say the number 1.", "in-process", 1.0]


def test_hostile_titles_are_escaped_and_no_package_names_a_bare_envduels(make, tmp_path):
    hostile = "<img src=x onerror=alert(1)> [click](javascript:alert(2)) | *x*"
    environments = make_rl_set(make)
    environments[0].title = hostile
    environments[0].save(update_fields=["title"])
    environments[0].author.name = "<script>alert(3)</script>"
    environments[0].author.save(update_fields=["name"])
    for export_format in ("envduels-v1", "gymnasium", "verifiers"):
        out = tmp_path / export_format
        call_command("export", "--format", export_format, "--out", str(out))
        readme = (out / "README.md").read_text()
        assert "<img" not in readme and "<script" not in readme and "[click](" not in readme
        assert "&lt;img src=x onerror=alert(1)&gt; \\[click\\](javascript" in readme
        pyproject = out / "pyproject.toml"
        if pyproject.exists():
            text = pyproject.read_text()
            dependencies = re.search(r"dependencies = \[(.*)\]", text).group(1)
            assert not re.search(r'"envduels\s*([<>=!~;\[].*)?"', dependencies), dependencies
            assert "envduels @ file://" in readme  # the documented manual step, pinned


def test_export_refuses_an_empty_set_and_a_used_directory(make, tmp_path):
    with pytest.raises(CommandError, match="training set is empty"):
        call_command("export", "--format", "envduels-v1", "--out", str(tmp_path / "none"))
    make_rl_set(make, count=1)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep").write_text("x")
    with pytest.raises(CommandError, match="not an empty directory"):
        call_command("export", "--format", "envduels-v1", "--out", str(tmp_path / "used"))
    assert not (tmp_path / "none").exists()


def test_a_design_with_graded_hints_exports_hint_1_and_hint_2(export, make, tmp_path):
    _, environments = export
    graded = environments[1]
    make.hint(environment=graded, text="Look again at the last digit.", level=2)
    out = tmp_path / "graded"
    call_command("export", "--format", "envduels-v1", "--out", str(out))
    rows = {row["environment"]: row
            for row in json.loads((out / "manifest.json").read_text())["environments"]}
    hints = json.loads((out / rows[str(graded.uuid)]["privileged"]).read_text())["hints"]
    assert hints == {"hint_1": "Say exactly the number in the task.",
                     "hint_2": "Look again at the last digit."}
    ungraded = json.loads((out / rows[str(environments[0].uuid)]["privileged"]).read_text())
    assert ungraded["hints"] == {"hint": "Say exactly the number in the task."}
