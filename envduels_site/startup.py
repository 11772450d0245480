"""A process's start without the cyclic garbage collector's passes.

Starting Django makes objects that live as long as the process does: modules, classes, models,
URL patterns, templates' nodes. While they are made, the collector's full passes walk the whole
growing heap again and again and free nothing; on this project's heap that is about 80 ms of CPU
per start (a sixth of `manage.py help`). So an entry point calls `collector_paused()` before it
imports Django, and the last installed app's `ready()` calls `collector_resumed()` once every
app is loaded: what start-up made is moved out of the collector's reach (`gc.freeze()`, so later
full passes do not walk it either) and the collector runs as usual from then on. `asgi.py` and
`wsgi.py` also resume it at their end, for a process whose apps were ready before it imported
them (no `ready()` runs a second time).

Processes started any other way (pytest, a Python shell importing Django) never pause it, and
`collector_resumed()` then does nothing.
"""

from __future__ import annotations

import contextlib
import gc

_paused = False


def collector_paused() -> None:
    """Turn the cyclic collector off until `collector_resumed()` (reference counting still frees
    almost everything start-up discards)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def collector_resumed() -> None:
    """Freeze what start-up made and turn the collector back on, if `collector_paused()` turned
    it off."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()


# The templates a first visitor's pages use, compiled before the web process serves.
WARM_TEMPLATES = ("base.html", "duels/home.html", "duels/landing.html", "duels/duels/list.html",
                  "duels/duels/new.html", "registration/login.html", "admin/login.html",
                  "403.html", "404.html")


def web_process_warm() -> None:
    """Load, before the web process serves its first request, what every first request would
    otherwise load: the URL configuration (it imports every page's view and what the views
    import) with its tables for `reverse()`, and the templates of the pages a visitor opens
    first. Their cost moves to the
    start, where no person waits for a page (benchmarks/first_load_bench.py)."""
    from django.template.loader import get_template
    from django.urls import get_resolver

    _reverse_tables(get_resolver())
    for name in WARM_TEMPLATES:
        get_template(name)


def _reverse_tables(resolver, namespace: str = "") -> None:
    """Build the tables `reverse()` reads, for the root and for every namespace under it (each
    is built on its first `reverse()` in that namespace, 0.1–0.2 s for this project's URLs);
    reading the root's patterns imports every view."""
    from django.urls import NoReverseMatch, reverse

    names = [name for name in resolver.reverse_dict if isinstance(name, str)]
    if namespace and names:
        with contextlib.suppress(NoReverseMatch):  # the table is built, whatever it finds
            reverse(f"{namespace}:{names[0]}")
    for child_namespace, (_prefix, child) in resolver.namespace_dict.items():
        _reverse_tables(child, f"{namespace}:{child_namespace}" if namespace else child_namespace)
