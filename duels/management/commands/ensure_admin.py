"""Create a local admin login on first run and print it once."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a local superuser `admin` with a random password if no superuser exists."
    requires_system_checks = []

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options) -> None:
        users = get_user_model()
        login_file = settings.VAR_DIR / "initial_login.txt"
        if users.objects.filter(is_superuser=True).exists():
            hint = f" (first login kept in {login_file})" if login_file.exists() else ""
            self.stdout.write(f"An admin login already exists{hint}.")
            return
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        login_file.parent.mkdir(parents=True, exist_ok=True)
        login_file.write_text(f"username: {username}\npassword: {password}\n")
        login_file.chmod(0o600)
        self.stdout.write(self.style.SUCCESS("Created a local admin login:"))
        self.stdout.write(f"    username: {username}\n    password: {password}")
        self.stdout.write(
            f"(also saved in {login_file}; change it with `manage.py changepassword {username}`)"
        )
