#!/usr/bin/env python
"""Django's command-line utility for EnvDuels."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "envduels_site.settings")
    from envduels_site.startup import collector_paused

    collector_paused()  # until the apps are ready (envduels_site/startup.py)
    from django.core.management import execute_from_command_line
    from django.db import DatabaseError

    try:
        execute_from_command_line(sys.argv)
    except DatabaseError as error:
        from envduels_site.missing_tables import missing_tables_line

        line = missing_tables_line(error)
        if line is None:
            raise
        sys.stderr.write(line + "\n")  # which database, and how to point at the right one
        sys.exit(1)


if __name__ == "__main__":
    main()
