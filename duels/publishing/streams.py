"""Every export as a stream of lines, for the `export` command and the download buttons alike."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from duels.exchange.export import exchange_dump_line, exchange_lines
from duels.exchange.selectors import (
    DuelExportFilters,
    EnvironmentExportFilters,
    exchange_duels_filtered,
    exchange_environments_filtered,
    exchange_everything,
    exchange_for_duels,
    exchange_for_environments,
)
from duels.models import Environment
from duels.trainers.setter_chat import SetterChatFilters, setter_chat_records
from duels.trainers.training import (
    training_chat_records,
    training_environment_records,
    training_episodes,
)

FORMATS = ("envduels", "environments", "chat", "setter-chat")


@dataclass(frozen=True)
class ExportRequest:
    """What to export. `scope` is "all", "duels" (duel filters) or "environments" (env filters)."""

    format: str = "envduels"
    scope: str = "all"
    duels: DuelExportFilters = DuelExportFilters()
    environments: EnvironmentExportFilters = EnvironmentExportFilters()
    success: bool | None = None
    condition: str | None = None
    thinking: bool = False  # chat: keep each reply's reasoning as `reasoning_content`
    setters: SetterChatFilters = SetterChatFilters()  # setter-chat: which answers


def export_lines(*, request: ExportRequest) -> Iterator[str]:
    """The lines (each ending in a newline) of the requested export."""
    if request.format == "chat":
        episodes = training_episodes(success=request.success, condition=request.condition)
        records = training_chat_records(episodes=episodes, thinking=request.thinking)
        return (exchange_dump_line(r) + "\n" for r in records)
    if request.format == "setter-chat":
        return (exchange_dump_line(r) + "\n" for r in setter_chat_records(filters=request.setters))
    if request.format == "environments":
        environments = (
            Environment.objects.all()
            if request.scope == "all"
            else exchange_environments_filtered(filters=request.environments)
        )
        records = training_environment_records(environments=environments)
        return (exchange_dump_line(r) + "\n" for r in records)
    if request.scope == "environments":
        environments = exchange_environments_filtered(filters=request.environments)
        return exchange_lines(exchange_for_environments(environments=environments))
    if request.scope == "duels":
        duels = exchange_duels_filtered(filters=request.duels)
        return exchange_lines(exchange_for_duels(duels=duels))
    return exchange_lines(exchange_everything())
