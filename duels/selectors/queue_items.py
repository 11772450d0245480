"""What a queue's items are and how a page names them: designs (content hashes), episodes
(their uuids) or steps (`<episode uuid>:<index>`), as AnnotationQueue.item_kind says.

Each item key is what an answer's `design` field holds, so answers, agreement, adjudications,
exports and imports treat every kind alike; only the pages that show an item look it up here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.db.models import Q
from django.urls import reverse

from duels.models import AnnotationQueue, Environment, Episode, ItemKind, Step
from duels.selectors.queues import design_representatives
from duels.words.display import env_name

_HASH = re.compile(r"^[0-9a-f]{64}$")
_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_EPISODE = re.compile(rf"^{_UUID}$")
_STEP = re.compile(rf"^({_UUID}):(\d{{1,9}})$")
STEP_LOOKUP_BATCH = 200  # steps looked up per query (a page shows one; a download up to 2,000)


def item_key_step(*, episode: UUID | str, index: int) -> str:
    return f"{episode}:{index}"


def item_key_valid(key: str, kind: str) -> bool:
    """Whether `key` is an item of that kind (a design hash, an episode uuid, a step)."""
    pattern = {ItemKind.DESIGN: _HASH, ItemKind.EPISODE: _EPISODE, ItemKind.STEP: _STEP}[kind]
    return bool(isinstance(key, str) and pattern.match(key))


def item_kind_of(key: str) -> str | None:
    """The kind whose format `key` has (None for none)."""
    return next((kind for kind in ItemKind.values if item_key_valid(key, kind)), None)


@dataclass(frozen=True)
class ItemView:
    """How a page names one item and links to it, and the object behind it (None when it is
    no longer stored here)."""

    key: str
    label: str
    url: str | None
    object: Any = None


def queue_item_views(*, queue: AnnotationQueue, keys: list[str]) -> dict[str, ItemView]:
    """Each key's view, in a constant number of queries whatever their number."""
    keys = list(dict.fromkeys(keys))
    if queue.item_kind == ItemKind.EPISODE:
        episodes = Episode.objects.filter(uuid__in=[k for k in keys if _EPISODE.match(k)])
        found = {str(e.uuid): e for e in episodes.select_related("solver", "environment__author")}
        return {key: _episode_view(key, found.get(key)) for key in keys}
    if queue.item_kind == ItemKind.STEP:
        found: dict[str, Step] = {}
        pairs = [(m.group(1), int(m.group(2))) for m in map(_STEP.match, keys) if m]
        for start in range(0, len(pairs), STEP_LOOKUP_BATCH):
            wanted = Q(pk__in=[])
            for episode, index in pairs[start:start + STEP_LOOKUP_BATCH]:
                wanted |= Q(episode__uuid=episode, index=index)
            steps = Step.objects.filter(wanted).select_related(
                "episode__solver", "episode__environment__author")
            found.update({item_key_step(episode=s.episode.uuid, index=s.index): s
                          for s in steps})
        return {key: _step_view(key, found.get(key)) for key in keys}
    environments = design_representatives(content_hashes=keys)
    return {key: _design_view(key, environments.get(key)) for key in keys}


def _design_view(key: str, environment: Environment | None) -> ItemView:
    if environment is None:
        return ItemView(key=key, label=f"design {key[:12]}", url=None)
    return ItemView(key=key, label=env_name(environment), object=environment,
                    url=reverse("duels:environment_detail", args=[environment.uuid]))


def _episode_label(episode: Episode) -> str:
    return (f"{episode.solver.name} on {env_name(episode.environment)} · {episode.condition} · "
            f"seed {episode.seed}")


def _episode_view(key: str, episode: Episode | None) -> ItemView:
    if episode is None:
        return ItemView(key=key, label=f"episode {key[:8]}", url=None)
    return ItemView(key=key, label=_episode_label(episode), object=episode,
                    url=reverse("duels:episode_detail", args=[episode.uuid]))


def _step_view(key: str, step: Step | None) -> ItemView:
    if step is None:
        return ItemView(key=key, label=f"step {key[:8]}…:{key.rsplit(':', 1)[-1]}", url=None)
    where = "reset" if step.index == 0 else f"step {step.index:,}"
    url = reverse("duels:episode_detail", args=[step.episode.uuid]) + f"#step-{step.index}"
    return ItemView(key=key, label=f"{_episode_label(step.episode)} · {where}", object=step,
                    url=url)
