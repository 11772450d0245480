"""Build the sandbox image, from the Dockerfile or offline from a Debian rootfs."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from sandbox_runner.errors import SandboxUnavailable
from sandbox_runner.image.build import build_image


class Command(BaseCommand):
    help = "Build the sandbox image (--offline: debootstrap + docker import, no registry)."
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--offline", action="store_true",
                            help="build from a Debian debootstrap rootfs, no registry needed")
        parser.add_argument("--tag", default=None,
                            help="image tag (default: the ENVDUELS_SANDBOX_IMAGE setting)")
        parser.add_argument("--force", action="store_true",
                            help="rebuild even when the image already carries this guest")

    def handle(self, *args, offline: bool, tag: str | None, force: bool, **options):
        tag = tag or getattr(settings, "ENVDUELS_SANDBOX_IMAGE", "envduels-sandbox:latest")
        try:
            build_image(tag=tag, offline=offline, force=force, log=self.stdout.write)
        except SandboxUnavailable as error:
            raise CommandError(str(error)) from error
        except Exception as error:  # the docker SDK raises several unrelated types
            raise CommandError(f"building {tag} failed: {error}") from error
