"""manage.py operators add USERNAME | remove USERNAME | list: who may start duels."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from duels.services.roles import RoleError, operator_add, operator_list, operator_remove


class Command(BaseCommand):
    help = "Add or remove an operator (may start duels), or list who may start duels."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["add", "remove", "list"])
        parser.add_argument("username", nargs="?")

    def handle(self, *args, action: str, username: str | None, **options) -> None:
        if action == "list":
            for name in operator_list():
                self.stdout.write(name)
            return
        if not username:
            raise CommandError(f"usage: manage.py operators {action} USERNAME")
        try:
            if action == "add":
                changed = operator_add(username=username)
                self.stdout.write(f"{username} may start duels" if changed
                                  else f"{username} was already an operator")
            else:
                changed = operator_remove(username=username)
                self.stdout.write(f"{username} no longer starts duels" if changed
                                  else f"{username} was not an operator")
        except RoleError as error:
            raise CommandError(str(error)) from error
