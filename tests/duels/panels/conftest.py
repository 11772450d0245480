"""Fixtures of the panels' tests: a working sandbox, and the hand-written export and snapshot
imported as the panel `original`."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.duels.panels.handmade import write_export, write_snapshot
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.parts import need


@pytest.fixture
def sandboxed(settings):
    need(sandbox_works(), "no sandbox backend works here")
    from sandbox_runner import available_backends

    backends = available_backends()
    settings.ENVDUELS_SANDBOX = "bwrap" if "bwrap" in backends else backends[0]


@pytest.fixture
def original(sandboxed, tmp_path, capsys):
    """The hand-written export (a seventh version reads the clock) and its snapshot, imported;
    the built-in players seeded."""
    from duels.models import Panel

    call_command("seed_builtin", verbosity=0)
    write_export(tmp_path / "export", extra_clock=True)
    write_snapshot(tmp_path / "snapshot", tmp_path / "export")
    call_command("import", str(tmp_path / "export"), "--name", "original")
    call_command("import", str(tmp_path / "snapshot"), "--panel", "original")
    capsys.readouterr()
    return Panel.objects.get(name="original")
