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
