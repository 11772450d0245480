"""Background tasks (Django Tasks API, database backend; run by `manage.py db_worker`).

Tasks stay thin: they parse their arguments and call one service. Each is registered by name in
`duels.engine.task_registry` (this module is loaded by the app's `ready()`): the engine and the
services
enqueue through that registry and never import this module.
"""

from __future__ import annotations

from django_tasks import task

from duels.engine.task_registry import tasks_register

# --- Duel engine ------------------------------------------------------------------------------
# A tournament is driven by a few `tournament_drive_task`s (queue "duels"); each runs the work
# loop in its worker, claiming duels to author and episodes to play, with threads up to the
# tournament's concurrency. The sweep finds work whose worker died and enqueues a new driver.


@task(queue_name="duels")
def tournament_drive_task(tournament_uuid: str) -> str:
    from duels.engine.workers import tournament_drive_in_worker

    return tournament_drive_in_worker(tournament_uuid=tournament_uuid)


@task(queue_name="duels")
def duel_drive_task(duel_uuid: str) -> str:
    from duels.engine.workers import duel_drive_in_worker

    return duel_drive_in_worker(duel_uuid=duel_uuid)


@task(queue_name="duels")
def study_drive_task(study_uuid: str) -> str:
    from duels.studies.scope import study_drive_in_worker

    return study_drive_in_worker(study_uuid=study_uuid)


@task(queue_name="duels")
def evaluation_drive_task(evaluation_uuid: str) -> str:
    from duels.panels.scope import evaluation_drive_in_worker

    return evaluation_drive_in_worker(evaluation_uuid=evaluation_uuid)


@task(queue_name="default")
def stale_work_sweep_task() -> list[str]:
    from duels.engine.workers import stale_work_sweep

    return stale_work_sweep()


# --- Analytics --------------------------------------------------------------------------------


@task(queue_name="analytics")
def analytics_refresh_task() -> int:
    from duels.services.analytics import analytics_refresh

    return analytics_refresh().duration_ms


@task(queue_name="analytics")
def study_figures_refresh_task(study_uuid: str) -> int:
    from duels.studies.results import study_figures_refresh_by_uuid

    return study_figures_refresh_by_uuid(study_uuid=study_uuid)


@task(queue_name="analytics")
def panel_figures_refresh_task(panel_uuid: str) -> int:
    from duels.panels.figures_cache import panel_figures_refresh_by_uuid

    return panel_figures_refresh_by_uuid(panel_uuid=panel_uuid)


@task(queue_name="analytics")
def queue_results_task(queue_uuid: str, kind: str) -> str:
    from duels.models import AnnotationQueue
    from duels.services.queue_results import queue_results_compute

    queue = AnnotationQueue.objects.filter(uuid=queue_uuid).first()
    if queue is not None:
        queue_results_compute(queue=queue, kind=kind)
    return kind


# --- Players ----------------------------------------------------------------------------------


@task(queue_name="default")
def player_check_task(player_uuid: str) -> bool:
    from duels.models import Player
    from duels.services.player_checks import player_check_run

    player = Player.objects.filter(uuid=player_uuid).first()
    return player is not None and player_check_run(player=player).ok


tasks_register(
    tournament_drive=tournament_drive_task,
    duel_drive=duel_drive_task,
    study_drive=study_drive_task,
    evaluation_drive=evaluation_drive_task,
    stale_work_sweep=stale_work_sweep_task,
    analytics_refresh=analytics_refresh_task,
    study_figures_refresh=study_figures_refresh_task,
    panel_figures_refresh=panel_figures_refresh_task,
    queue_results=queue_results_task,
    player_check=player_check_task,
)
