#!/usr/bin/env python
"""Django's command-line utility for EnvDuels."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    from envduels_site.startup import collector_paused

    collector_paused()  # until the apps are ready (envduels_site/startup.py)
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
