"""Starting a command or a web process does not import the statistics stack or a model SDK.

scipy, datasketch and plotly take seconds to import, numpy a fifth of one; only computing figures
needs them, so the URL configuration, the page modules and `manage.py` commands that do not
compute leave them out (a page's pass-rate intervals are plain arithmetic; `manage.py analytics`
imports them only when it recomputes).
So do the model SDKs (`openai` takes seconds on a loaded machine): only a player that calls a
model needs one, not the exports that write its chat form. Twisted (Daphne's server) is imported
by the web server and `runserver` only.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "scipy", "datasketch", "plotly", "openai", "anthropic",
         "twisted.internet.reactor")

PROBE = """
import sys
import django
django.setup()
from django.urls import get_resolver
get_resolver().url_patterns  # imports every view module, as the first request does
import envduels_site.asgi  # noqa: F401  the web process's application
from django.core.management import get_commands, load_command_class
for name, app in get_commands().items():
    if app in ("duels", "sandbox_runner"):
        load_command_class(app, name)  # what a command imports before it runs
print(",".join(sorted(name for name in {heavy!r} if name in sys.modules)) or "none")
"""


def test_url_conf_and_web_application_leave_the_statistics_stack_unimported(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var")}
    done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "none", f"imported at start-up: {done.stdout.strip()}"


RUNSERVER_PROBE = """
import sys
sys.argv = ["manage.py", "runserver"]
import django
django.setup()
from django.apps import apps
print(apps.is_installed("daphne"))
"""


def test_runserver_still_serves_websockets_through_daphne(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var")}
    done = subprocess.run([sys.executable, "-c", RUNSERVER_PROBE], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "True"


def test_system_checks_run_where_serving_starts_and_nowhere_else():
    """Django's system checks cost about half of a command's start-up: `serve` and `worker` run
    them as they start, one-shot commands skip them, and so do the task workers a supervisor
    starts (and restarts) after its own checks (docs/command-line.md)."""
    from django.core.management import get_commands, load_command_class

    from duels.engine.supervisor import worker_children

    ours = {name: app for name, app in get_commands().items()
            if app in {"duels", "sandbox_runner"}}
    checking = sorted(name for name, app in ours.items()
                      if load_command_class(app, name).requires_system_checks)
    assert checking == ["serve", "worker"]
    assert len(ours) > len(checking) + 10
    assert all("--skip-checks" in child.argv
               for child in worker_children(concurrency=2, prefix="probe"))


SETUP_PROBE = """
import sys
import django
django.setup()
print(",".join(sorted(name for name in {light!r} if name in sys.modules)) or "none")
"""
# What every command's start (`manage.py help` included) used to import and never used: the
# sandbox's backends and session (the sandbox app's package loads them on first use) and the
# analytics records (the environment model needs only the design hash).
SETUP_UNUSED = ("sandbox_runner.backends", "sandbox_runner.session", "sandbox_runner.limits",
                "duels.analytics.data")


def test_django_setup_leaves_the_sandbox_backends_and_analytics_records_unimported(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var")}
    done = subprocess.run([sys.executable, "-c", SETUP_PROBE.format(light=SETUP_UNUSED)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "none", f"imported by django.setup(): {done.stdout.strip()}"


def test_the_sandbox_package_still_hands_out_its_names():
    import sandbox_runner
    from sandbox_runner import SandboxError, SandboxLimits, open_sandbox  # noqa: F401

    assert sandbox_runner.SandboxTimeout.__module__ == "sandbox_runner.errors"
    assert set(sandbox_runner.__all__) <= set(dir(sandbox_runner))
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        sandbox_runner.nothing_here  # noqa: B018


@pytest.mark.parametrize("entry", ["manage.py", "asgi", "asgi after set-up"])
def test_the_collector_is_paused_for_start_up_only(tmp_path, entry):
    """Entry points start Django with the cyclic collector paused; once the apps are ready it
    runs again, with what start-up made frozen out of its passes (envduels_site/startup.py)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "envduels_site.settings",
           "ENVDUELS_VAR_DIR": str(tmp_path / "var")}
    if entry == "manage.py":
        command = [sys.executable, "manage.py", "shell", "-c",
                   "import gc; print(gc.isenabled(), gc.get_freeze_count() > 0)"]
    elif entry == "asgi":
        command = [sys.executable, "-c",
                   "import gc, envduels_site.asgi; "
                   "print(gc.isenabled(), gc.get_freeze_count() > 0)"]
    else:  # as Daphne's runserver loads the application, after Django's own start-up
        command = [sys.executable, "-c",
                   "import gc, django; django.setup(); import envduels_site.asgi; "
                   "print(gc.isenabled(), gc.get_freeze_count() > 0)"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True True"


def test_a_process_that_never_paused_the_collector_is_left_alone():
    import gc

    from envduels_site.startup import collector_resumed

    frozen = gc.get_freeze_count()
    collector_resumed()
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen
