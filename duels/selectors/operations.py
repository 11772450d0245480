"""Reads for operators: health of the parts (/healthz), the task workers, the task queues.

Nothing here reveals a secret: database and channel-layer errors are reported by type only,
never with their connection strings.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Count
from django.utils import timezone

from duels.models import WorkerHeartbeat

LAYER_TIMEOUT_S = 2.0


def workers_live() -> list[WorkerHeartbeat]:
    """Worker processes whose supervisor reported them within the dead-after window."""
    from duels.engine.heartbeats import worker_dead_after

    since = timezone.now() - worker_dead_after()
    return list(WorkerHeartbeat.objects.filter(last_seen_at__gte=since))


def workers_all() -> list[WorkerHeartbeat]:
    """Every worker heartbeat row, live or silent (silent ones are reaped within a beat)."""
    return list(WorkerHeartbeat.objects.all())


def task_queue_depth() -> dict[tuple[str, str], int]:
    """Task rows waiting (READY) or being run (RUNNING), by (queue, status)."""
    from django_tasks_db.models import DBTaskResult

    rows = (DBTaskResult.objects.filter(status__in=["READY", "RUNNING"]).order_by()
            .values_list("queue_name", "status").annotate(n=Count("id")))
    return {(queue, status): n for queue, status, n in rows}


def _database() -> dict[str, Any]:
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:
        return {"ok": False, "vendor": connection.vendor, "error": type(error).__name__}
    return {"ok": True, "vendor": connection.vendor,
            "latency_ms": round((time.monotonic() - started) * 1000, 1)}


def _channel_layer() -> dict[str, Any]:
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    backend = settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")
    report: dict[str, Any] = {
        "backend": "redis" if "redis" in backend.lower() else "in-memory",
        "shared_across_processes": "InMemory" not in backend,
    }
    if layer is None:
        return {**report, "ok": False, "error": "no channel layer configured"}

    async def roundtrip() -> None:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "health.ping"})
        await asyncio.wait_for(layer.receive(channel), LAYER_TIMEOUT_S)

    try:
        async_to_sync(asyncio.wait_for)(roundtrip(), LAYER_TIMEOUT_S * 2)
    except Exception as error:
        return {**report, "ok": False, "error": type(error).__name__}
    return {**report, "ok": True}


def _sandbox() -> dict[str, Any]:
    from sandbox_runner import SandboxUnavailable, backend_status, resolve_backend

    statuses = backend_status()
    try:
        chosen = resolve_backend(settings.ENVDUELS_SANDBOX)
        error = None
    except SandboxUnavailable as exc:
        chosen, error = None, str(exc)
    by_name = {status.name: status for status in statuses}
    return {
        "configured": settings.ENVDUELS_SANDBOX,
        "backend": chosen,
        "limits_whole_sandbox": (by_name[chosen].limits_whole_sandbox
                                 if chosen in by_name else False if chosen else None),
        "error": error,
        "backends": [status.as_dict() for status in statuses],
    }


def _workers() -> dict[str, Any]:
    now = timezone.now()
    try:
        live = workers_live()
    except DatabaseError as error:  # answering, but not migrated (or a query failed)
        return {"live": None, "items": [],
                "error": f"{type(error).__name__}; has `manage.py migrate` been run?"}
    return {
        "live": len(live),
        "items": [{"host": worker.host, "pid": worker.pid, "queues": worker.queue_list,
                   "started_at": worker.started_at.isoformat(),
                   "last_heartbeat": worker.last_seen_at.isoformat(),
                   "seconds_since_heartbeat": round((now - worker.last_seen_at).total_seconds(),
                                                    1)}
                  for worker in live],
    }


def health_report() -> dict[str, Any]:
    """The parts' health: `status` is `ok`, `degraded` (the database answers, something else
    does not) or `down` (no database)."""
    database = _database()
    layer = _channel_layer()
    sandbox = _sandbox()
    workers = _workers() if database["ok"] else {"live": None, "items": []}
    if not database["ok"]:
        status = "down"
    elif layer["ok"] and sandbox["backend"] and workers["live"]:
        status = "ok"
    else:
        status = "degraded"
    return {"status": status, "time": timezone.now().isoformat(), "database": database,
            "channel_layer": layer, "sandbox": sandbox, "workers": workers}
