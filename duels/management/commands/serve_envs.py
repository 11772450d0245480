"""manage.py serve_envs --port N [set options | --design HASH ... | --from DIR]
manage.py serve_envs --role setter --solvers A,B --seeds K [--concurrency N] [--cost-cap USD]

Serves designs as an OpenEnv environment server (docs/flywheel.md): the curated training set
chosen by the set options (as `manage.py training_set`), the designs named by --design (a
prefix of the design hash, repeatable), or the designs of an envduels-v1 export (--from DIR,
no database needed). Each session plays in its own fresh sandbox; --max-sessions caps the
sessions open at once (--max-sessions-per-client from one address, which may reset
--resets-per-minute times a minute), --max-buffer-kb cuts a session whose client does not read,
and --idle-timeout closes one that plays nothing. Prints one line
`serving N designs on http://HOST:PORT` when it listens (--port 0 picks a free port).

With --role setter it serves the setter's seat instead: each session's one action is a whole
setter answer, its reward the answer's setter score as the named solver players measure it on
seeds 0..K-1 in both conditions (duels/engine/setter_seat.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from duels.management.commands.training_set import add_set_arguments, set_filters
from duels.trainers.common import PackageError
from sandbox_runner import SandboxUnavailable, resolve_backend

# Messages of one session that may wait for the server before it stops reading from the client.
INBOUND_MESSAGES = 16


class Command(BaseCommand):
    help = "Serve environment designs as an OpenEnv environment server (sandboxed sessions)."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1",
                            help="Address to listen on (0.0.0.0 inside a container).")
        parser.add_argument("--port", type=int, default=8010)
        parser.add_argument("--design", action="append", default=[],
                            help="A design's hash (or a unique prefix); repeatable.")
        parser.add_argument("--from", dest="export", default="",
                            help="Serve the designs of this envduels-v1 export directory.")
        parser.add_argument("--max-sessions", type=int, default=64,
                            help="Sessions open at once; one more is refused (default 64).")
        parser.add_argument("--max-sessions-per-client", type=int, default=8,
                            help="Sessions one client address may hold at once (default 8).")
        parser.add_argument("--resets-per-minute", type=int, default=30,
                            help="Resets one client address may make a minute (default 30).")
        parser.add_argument("--max-buffer-kb", type=int, default=1024,
                            help="Cut a session whose client leaves this many KiB unread "
                                 "(default 1024).")
        parser.add_argument("--idle-timeout", type=float, default=300.0,
                            help="Close a session after this many seconds without a reset or "
                                 "a step.")
        parser.add_argument("--backend", default="auto",
                            help="Sandbox backend: auto, docker, bwrap or unshare.")
        parser.add_argument("--role", choices=["solver", "setter"], default="solver",
                            help="solver: play designs (default); setter: the action is a "
                                 "setter answer, rewarded by its measured setter score.")
        parser.add_argument("--solvers", default="",
                            help="setter: the solver players that measure an answer, by name "
                                 "(comma-separated).")
        parser.add_argument("--seeds", type=int, default=4,
                            help="setter: seeds 0..K-1 per solver and condition (default 4).")
        parser.add_argument("--concurrency", type=int, default=4,
                            help="setter: plays of one answer run at once (default 4).")
        parser.add_argument("--cost-cap", type=float, default=None,
                            help="setter: USD the solvers' calls may cost in all; past it a "
                                 "reward is an error.")
        add_set_arguments(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        from duels.selectors.training_sets import training_set_select
        from duels.trainers.openenv_server import EnvServer
        from duels.trainers.served_designs import (
            served_designs_from_export,
            served_designs_from_hashes,
            served_designs_from_set,
        )

        if min(options["max_sessions"], options["max_sessions_per_client"],
               options["resets_per_minute"]) < 1 or options["idle_timeout"] <= 0 \
                or options["max_buffer_kb"] < 64:
            raise CommandError("--max-sessions, --max-sessions-per-client and "
                               "--resets-per-minute need ≥ 1, --max-buffer-kb ≥ 64 and "
                               "--idle-timeout > 0")
        if options["role"] == "setter":
            self.serve_setter(options)
            return
        try:
            backend = resolve_backend(options["backend"])
            if options["export"]:
                designs = served_designs_from_export(root=Path(options["export"]))
            elif options["design"]:
                designs = served_designs_from_hashes(prefixes=options["design"])
            else:
                designs = served_designs_from_set(
                    items=training_set_select(filters=set_filters(options)))
        except (PackageError, SandboxUnavailable) as error:
            raise CommandError(str(error)) from error
        if not designs:
            raise CommandError("the training set is empty: no design has a training value "
                               "under these filters (run `manage.py analytics --refresh` "
                               "after duels), or name designs with --design / --from")
        application = EnvServer(designs=designs, max_sessions=options["max_sessions"],
                                idle_timeout=options["idle_timeout"], backend=backend,
                                max_client_sessions=options["max_sessions_per_client"],
                                resets_per_minute=options["resets_per_minute"])
        self.run(application, host=options["host"], port=options["port"],
                 buffer_bytes=options["max_buffer_kb"] * 1024)

    def serve_setter(self, options: dict[str, Any]) -> None:
        from django.conf import settings

        from duels.engine.setter_seat import SeatSpend, SetterSeat
        from duels.models import Player
        from duels.trainers.setter_server import SetterServer

        names = [name.strip() for name in options["solvers"].split(",") if name.strip()]
        if not names:
            raise CommandError("--role setter needs --solvers A,B (solver players by name)")
        players = {player.name: player for player in Player.objects.filter(name__in=names)}
        missing = [name for name in names if name not in players]
        if missing:
            raise CommandError(f"no player named {', '.join(missing)} (manage.py "
                               "seed_builtin makes the built-in ones; list them on /players/)")
        try:
            settings.ENVDUELS_SANDBOX = resolve_backend(options["backend"])
            seat = SetterSeat(solvers=[players[name] for name in names], seeds=options["seeds"],
                              concurrency=options["concurrency"],
                              spend=SeatSpend(cap=options["cost_cap"]))
        except (ValueError, SandboxUnavailable) as error:
            raise CommandError(str(error)) from error
        application = SetterServer(seat=seat, max_sessions=options["max_sessions"],
                                   idle_timeout=options["idle_timeout"],
                                   backend=settings.ENVDUELS_SANDBOX)
        application.clients.max_sessions = options["max_sessions_per_client"]
        application.clients.resets_per_minute = options["resets_per_minute"]
        self.run(application, host=options["host"], port=options["port"],
                 buffer_bytes=options["max_buffer_kb"] * 1024,
                 what=f"the setter's seat ({', '.join(names)} × {options['seeds']} seeds)")

    def run(self, application, *, host: str, port: int, buffer_bytes: int,
            what: str = "") -> None:
        from daphne.endpoints import build_endpoint_description_strings

        from duels.trainers.openenv_server import MAX_MESSAGE_BYTES
        from envduels_site.http_server import BodyLimits, BoundedServer

        def ready() -> None:
            if not server.listening_addresses:  # the listen has not completed yet
                from twisted.internet import reactor

                reactor.callLater(0.05, ready)
                return
            bound = server.listening_addresses[0][1]
            sys.stdout.write(f"serving {what or f'{len(application.designs)} designs'} on "
                             f"http://{host}:{bound} (sandbox: {application.backend}, at most "
                             f"{application.max_sessions} sessions)\n")
            sys.stdout.flush()

        # Daphne handles SIGTERM/SIGINT: it stops accepting and closes open sessions, whose
        # sandboxes are then closed with them.
        # A body over the cap is refused as it arrives, before the server buffers it.
        server = BoundedServer(
            application=application,
            body_limits=BodyLimits(default=MAX_MESSAGE_BYTES, json_errors=True),
            # A client that does not read is cut past the buffer cap; one that sends faster
            # than its session answers is read from only as its messages are taken.
            websocket_outbound_max=buffer_bytes, websocket_inbound_max=INBOUND_MESSAGES,
            endpoints=build_endpoint_description_strings(host=host, port=port),
            ready_callable=ready, verbosity=0, websocket_max_message_size=512 * 1024,
            application_close_timeout=5)
        server.run()
        application.executor.shutdown(wait=False, cancel_futures=True)
