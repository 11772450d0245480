"""The original's files from the browser, in Chromium: the hand-written envduels-v1 export and
result snapshot of docs/examples/panel/ uploaded as archives, a preview whose counts equal the
files, the import, then a built-in player evaluated from the panel page whose progress moves to
the end without a reload; every broken copy is refused in the preview, naming the version and
the fault, with nothing written."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from duels.models import Environment, Evaluation, Hint, OutsideOutcome, Panel, PanelEntry, Status
from tests.duels.panels.test_import_export import breakers
from tests.duels.panels.test_snapshot import TARGET, change_hint, source_one_byte_off
from tests.duels.trainers.test_rl_gymnasium import sandbox_works
from tests.helpers.browser import BrowserTestCase
from tests.helpers.parts import need

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "panel"


def archive(folder: Path, name: str) -> dict:
    """The folder as an upload: a zip or a gzipped tar holding the folder itself."""
    buffer = io.BytesIO()
    if name.endswith(".zip"):
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as packed:
            for path in sorted(folder.rglob("*")):
                packed.write(path, f"{folder.name}/{path.relative_to(folder)}")
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as packed:
            packed.add(folder, arcname=folder.name)
    return {"name": name, "mimeType": "application/octet-stream", "buffer": buffer.getvalue()}


def nothing_written() -> bool:
    """No panel, version, environment, hint or outcome (the built-in players are seeded)."""
    return not any(model.objects.exists() for model in (Panel, PanelEntry, Environment, Hint,
                                                        OutsideOutcome))


class PanelImportBrowserTest(BrowserTestCase):
    def setUp(self):
        super().setUp()
        need(sandbox_works(), "no sandbox backend works here")
        call_command("seed_builtin", verbosity=0)
        self.sign_in("curator", "curator-pass-123")
        get_user_model().objects.filter(username="curator").update(is_staff=True)
        self.folder = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.folder, True)

    def upload(self, export: Path, snapshot: Path | None) -> None:
        self.page.goto(self.url("/panels/import/"))
        self.page.set_input_files("#id_archive", archive(export, "example.zip"))
        if snapshot is not None:
            self.page.set_input_files("#id_snapshot", archive(snapshot, "snapshot.tar.gz"))
        # The preview validates every class in the sandbox: it may take a while on a busy box.
        self.page.click("#panel-import-form button[type=submit]", no_wait_after=True)
        self.page.wait_for_selector("#import-preview", timeout=120_000)

    def test_import_preview_then_evaluate_from_the_web_to_the_end(self):
        self.upload(EXAMPLES / "export", EXAMPLES / "snapshot")
        manifest = json.loads((EXAMPLES / "export" / "manifest.json").read_text())
        episodes = sum(len(json.loads(path.read_text()).get("episodes", []))
                       for path in (EXAMPLES / "snapshot").rglob("run.json"))
        assert self.page.inner_text("#preview-version-count") == str(
            len(manifest["environments"]))
        assert self.page.inner_text("#preview-outcome-count") == str(episodes)
        rows = self.page.locator("#preview-versions tbody tr")
        assert rows.count() == len(manifest["environments"])
        assert nothing_written()
        self.page.click("#import-confirm button.primary", no_wait_after=True)
        self.page.wait_for_selector("#panel-live", timeout=120_000)
        panel = Panel.objects.get()
        assert panel.entries.count() == len(manifest["environments"])
        assert OutsideOutcome.objects.filter(panel=panel).count() == episodes

        # Evaluate a built-in player from the page; the page is never reloaded.
        self.page.evaluate("window.sameDocument = true")
        self.page.select_option("#id_player", label=self.page.locator(
            "#id_player option", has_text="builtin-cautious").inner_text())
        self.page.fill("#id_seeds_per_environment", "1")
        self.page.fill("#id_environments", "3")
        self.page.click("#evaluation-form button[type=submit]")
        self.page.wait_for_selector("#evaluation-form >> text=queued on panel", timeout=20_000)
        row = self.page.locator("#evaluations tbody tr", has_text="builtin-cautious")
        assert "0 / 6" in row.inner_text()
        evaluation = Evaluation.objects.get()
        driver = threading.Thread(target=call_command, args=(
            "evaluate", "--panel", panel.name, "--player", "builtin-cautious",
            "--seeds-per-environment", "1", "--environments", "3", "--wait"),
            kwargs={"stdout": io.StringIO(), "stderr": io.StringIO()})
        driver.start()
        driver.join(timeout=300)
        evaluation.refresh_from_db()
        assert evaluation.status == Status.FINISHED
        self.page.wait_for_selector(
            "#evaluations tbody tr:has-text('builtin-cautious') >> text=6 / 6", timeout=30_000)
        assert "finished" in row.inner_text()
        assert self.page.evaluate("window.sameDocument") is True

    def test_each_broken_copy_is_refused_in_the_preview_with_nothing_written(self):
        for breaker, entry, problem in breakers():
            export = self.folder / breaker.__name__ / "export"
            shutil.copytree(EXAMPLES / "export", export)
            breaker(export)
            self.upload(export, None)
            refusal = self.page.inner_text("#preview-refused")
            assert entry in refusal and problem in refusal, (breaker.__name__, refusal)
            assert self.page.locator("#import-confirm").count() == 0
            assert nothing_written()
        for breaker, problem in ((change_hint, "hint differs"),
                                 (source_one_byte_off, "env.py differs")):
            snapshot = self.folder / breaker.__name__ / "snapshot"
            shutil.copytree(EXAMPLES / "snapshot", snapshot)
            breaker(snapshot)
            self.upload(EXAMPLES / "export", snapshot)
            refusal = self.page.inner_text("#preview-snapshot-refused")
            assert TARGET in refusal and problem in refusal, (breaker.__name__, refusal)
            assert self.page.locator("#import-confirm").count() == 0
            assert not Panel.objects.exists() and not OutsideOutcome.objects.exists()
