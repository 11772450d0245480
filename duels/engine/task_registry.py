"""The background tasks by name: the one interface through which the engine and the services
enqueue work.

`duels/tasks.py` defines the tasks and calls into the engine and the services; it registers each
task here when it is imported (the app's `ready()` imports it). The engine and the services ask
for a task by name (`task_named("tournament_drive")`), so they never import `duels.tasks` and the
layers point one way: tasks → engine/services → this module.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured

_registered: dict[str, Any] = {}


def tasks_register(**tasks: Any) -> None:
    """Register background tasks (django_tasks `Task` objects) under their names."""
    _registered.update(tasks)


def task_named(name: str) -> Any:
    """The task registered as `name`; a clear error when the tasks module was never loaded."""
    try:
        return _registered[name]
    except KeyError:
        raise ImproperlyConfigured(
            f"No background task named {name!r} is registered: 'duels' must be in "
            "INSTALLED_APPS (its ready() loads duels.tasks, which registers the tasks)."
        ) from None
