"""Run an environment file by hand in a sandbox and print the transcript."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from sandbox_runner.limits import BACKEND_CHOICES, default_limits
from sandbox_runner.transcript import sandbox_transcript


class Command(BaseCommand):
    help = "Run FILE.py in a sandbox: reset with --seed, play --actions (one per line)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="environment source file")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--actions", type=Path, default=None,
                            help="file with one action per line")
        parser.add_argument("--backend", choices=BACKEND_CHOICES, default="auto")
        parser.add_argument("--call-timeout", type=float, default=None,
                            help="seconds each call may take (default: the configured limit)")
        parser.add_argument("--json", action="store_true", help="print the transcript as JSON")

    def handle(self, *args, file: Path, seed: int, actions: Path | None, backend: str,
               call_timeout: float | None, json: bool, **options):
        try:
            code = file.read_text()
            action_list = actions.read_text().splitlines() if actions else []
        except (OSError, UnicodeDecodeError) as error:
            raise CommandError(f"cannot read input: {error}") from error
        limits = default_limits()
        if call_timeout is not None:
            if call_timeout <= 0:
                raise CommandError("--call-timeout must be positive")
            limits = replace(limits, call_timeout=call_timeout)
        transcript = sandbox_transcript(code=code, seed=seed, actions=action_list,
                                        limits=limits, backend=backend)
        if json:
            self.stdout.write(dumps(transcript))
        else:
            self.write_text(transcript)
        if transcript["error"]:
            raise CommandError(f"{transcript['error']['type']}: {transcript['error']['message']}",
                               returncode=2)

    def write_text(self, transcript: dict) -> None:
        # Unknown figures (no backend could start, the module did not load) print as "—".
        backend, max_steps = transcript["backend"], transcript["max_steps"]
        self.stdout.write(f"backend {backend or '—'}, seed {transcript['seed']}, "
                          f"max_steps {'—' if max_steps is None else max_steps}")
        for status in transcript["backend_status"]:
            if status["name"] == transcript["backend"] and not status["limits_whole_sandbox"]:
                self.stderr.write(f"note: {status['reason']}")
        if transcript["reset"] is not None:
            self.stdout.write(transcript["reset"])
        for number, step in enumerate(transcript["steps"], start=1):
            self.stdout.write(f"--- {number}> {step['action']}")
            self.stdout.write(step["observation"])
            if step["done"]:
                self.stdout.write("SUCCESS" if step["success"] else "FAILED")


def dumps(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)
