"""manage.py api_token create USER NAME [--scope read|operate] [--days N] | list [USER] | revoke ID

API tokens. Only the SHA-256 of a token is stored: `create` prints the token once. A token
ends when it expires, when its user's password changes or when the user is deactivated."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from duels.models import ApiToken, TokenScope
from duels.selectors.api_tokens import api_token_state
from duels.services.api_tokens import (
    api_token_create,
    api_token_list,
    api_token_revoke,
)


class Command(BaseCommand):
    help = "Create, list or revoke read-API tokens."
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="Make a token and print it once.")
        create.add_argument("user")
        create.add_argument("name")
        create.add_argument("--scope", choices=TokenScope.values, default=TokenScope.READ,
                            help="read (the API and episode streams; the default) or operate "
                                 "(also /metrics and /healthz details, for staff users)")
        create.add_argument("--days", type=int, default=None,
                            help="expire after this many days (default: never)")
        listing = actions.add_parser("list", help="Tokens (never their secrets).")
        listing.add_argument("user", nargs="?")
        revoke = actions.add_parser("revoke", help="Delete a token by its id.")
        revoke.add_argument("id", type=int)

    def _user(self, username: str) -> Any:
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "create":
            days = options["days"]
            if days is not None and not 1 <= days <= 3650:
                raise CommandError(f"--days must be between 1 and 3650, not {days}")
            expires_at = timezone.now() + dt.timedelta(days=days) if days else None
            token, raw = api_token_create(user=self._user(options["user"]), name=options["name"],
                                          scope=options["scope"], expires_at=expires_at)
            until = f"until {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else "no expiry"
            self.stderr.write(f"token {token.pk} for {token.user} (scope {token.scope}, {until}); "
                              "store it now, it is shown once:")
            self.stdout.write(raw)
        elif action == "list":
            user = self._user(options["user"]) if options["user"] else None
            for token in api_token_list(user=user):
                used = token.last_used_at.isoformat() if token.last_used_at else "never"
                self.stdout.write(
                    f"{token.pk}\t{token.user}\t{token.name}\t{token.scope}"
                    f"\tcreated {token.created_at:%Y-%m-%d}\tlast used {used}"
                    f"\t{api_token_state(token=token)}"
                )
        else:
            try:
                token = ApiToken.objects.get(pk=options["id"])
            except ApiToken.DoesNotExist:
                raise CommandError(f"no token with id {options['id']}") from None
            api_token_revoke(token=token)
            self.stdout.write(f"revoked token {options['id']}")
