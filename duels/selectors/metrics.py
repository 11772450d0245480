"""/metrics in the Prometheus text format, computed from the database at each scrape.

Counts come from stored rows, so every web process answers the same (stream viewers excepted:
they are the viewers connected to this process). Latencies are summaries (`_count`, `_sum`).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Sum
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)

from duels.models import Duel, Episode, ModelCall, Step, Tournament
from duels.selectors.operations import task_queue_depth, workers_live

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _by_status(name: str, what: str, model) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, f"{what} by status", labels=["status"])
    counts = dict(model.objects.order_by().values_list("status").annotate(n=Count("id")))
    for status in ("pending", "running", "finished", "failed", "cancelled"):
        family.add_metric([status], counts.get(status, 0))
    return family


def _model_calls() -> Iterator[Metric]:
    latency = SummaryMetricFamily("envduels_model_call_latency_seconds",
                                  "Model call latency by player and role",
                                  labels=["player", "role"])
    tokens = CounterMetricFamily("envduels_model_tokens", "Model tokens by player, role and "
                                 "direction", labels=["player", "role", "direction"])
    solver = (Step.objects.filter(index__gt=0).order_by().values_list("episode__solver__name")
              .annotate(n=Count("id"), ms=Sum("latency_ms"), tokens_in=Sum("input_tokens"),
                        tokens_out=Sum("output_tokens")))
    setter = (ModelCall.objects.order_by().values_list("player__name")
              .annotate(n=Count("id"), ms=Sum("latency_ms"), tokens_in=Sum("input_tokens"),
                        tokens_out=Sum("output_tokens")))
    for role, rows in (("solver", solver), ("setter", setter)):
        for player, calls, ms, tokens_in, tokens_out in rows:
            latency.add_metric([player, role], count_value=calls, sum_value=(ms or 0) / 1000)
            tokens.add_metric([player, role, "input"], tokens_in or 0)
            tokens.add_metric([player, role, "output"], tokens_out or 0)
    yield latency
    yield tokens


def _sandboxes() -> Iterator[Metric]:
    start = SummaryMetricFamily("envduels_sandbox_start_seconds",
                                "Time to start an episode's sandbox, by backend",
                                labels=["backend"])
    step = SummaryMetricFamily("envduels_sandbox_step_seconds",
                               "Time of one sandbox step call, by backend", labels=["backend"])
    rows = (Episode.objects.exclude(sandbox_backend="").filter(sandbox_start_ms__gt=0)
            .order_by().values_list("sandbox_backend")
            .annotate(n=Count("id"), start_ms=Sum("sandbox_start_ms"), steps=Sum("steps"),
                      step_ms=Sum("sandbox_step_ms")))
    for backend, episodes, start_ms, steps, step_ms in rows:
        start.add_metric([backend], count_value=episodes, sum_value=(start_ms or 0) / 1000)
        step.add_metric([backend], count_value=steps or 0, sum_value=(step_ms or 0) / 1000)
    yield start
    yield step


class _EnvDuelsCollector:
    def __init__(self, *, stream_viewers: int) -> None:
        self.stream_viewers = stream_viewers

    def collect(self) -> Iterator[Metric]:
        yield _by_status("envduels_episodes", "Episodes", Episode)
        yield _by_status("envduels_duels", "Duels", Duel)
        yield _by_status("envduels_tournaments", "Tournaments", Tournament)
        yield CounterMetricFamily("envduels_steps", "Stored steps (solver turns and resets)",
                                  value=Step.objects.count())
        yield from _model_calls()
        yield from _sandboxes()
        depth = GaugeMetricFamily("envduels_task_queue_depth", "Task rows by queue and status",
                                  labels=["queue", "status"])
        for (queue, status), count in sorted(task_queue_depth().items()):
            depth.add_metric([queue, status], count)
        yield depth
        yield GaugeMetricFamily("envduels_workers_live", "Task worker processes with a recent "
                                "heartbeat", value=len(workers_live()))
        yield GaugeMetricFamily("envduels_stream_viewers", "Live episode viewers connected to "
                                "this web process", value=self.stream_viewers)


def metrics_render(*, stream_viewers: int) -> bytes:
    """Every metric, in the Prometheus text exposition format. `stream_viewers` is this web
    process's count of live viewers (duels.live.episode_hub.stream_viewers)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_EnvDuelsCollector(stream_viewers=stream_viewers))
    return generate_latest(registry)
