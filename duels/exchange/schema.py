"""The `envduels.v1` exchange format's schema (docs/exchange-format.md): each kind's fields, the
order kinds are written in (references before referrers) and the model each kind is stored as.

The exporter (`export.py`), the validator and the importer (`importer.py`) read this one schema,
so every side agrees on every field. Players carry only the *name* of their API-key variable,
never a key.
"""

from __future__ import annotations

from django.db import models

from duels.exchange.fields import Field, _f, _ref
from duels.models import (
    Adjudication,
    Annotation,
    AnnotationQueue,
    Answer,
    Contract,
    Duel,
    Environment,
    Episode,
    Hint,
    ItemKind,
    Outcome,
    Player,
    Provider,
    QueueKind,
    Rubric,
    Status,
    Step,
    Study,
    TargetKind,
    Tournament,
    TransferResult,
)

FORMAT = "envduels.v1"
FORMAT_LINE = {"format": FORMAT}


_STATUSES = tuple(Status.values)
_NONNEG = {"minimum": 0}

SCHEMA: dict[str, tuple[Field, ...]] = {
    "player": (
        _f("name", "str"),
        _f("provider", "str", choices=tuple(Provider.values)),
        _f("model", "str"),
        _f("base_url", "str"),
        _f("api_key_env", "str"),
        _f("params", "object"),
        _f("price_in", "number", **_NONNEG),
        _f("price_out", "number", **_NONNEG),
        # Optional: cached-input prices (null = the provider's documented share of price_in).
        _f("price_cached_in", "number", nullable=True, optional=True, **_NONNEG),
        _f("price_cache_write", "number", nullable=True, optional=True, **_NONNEG),
        _f("builtin", "bool"),
        # Optional (older files lack it): model size in billions of parameters.
        _f("parameters_b", "number", nullable=True, minimum=0),
    ),
    # A study (a field run): its own kind; its versions and field plays refer to it.
    "study": (
        _f("name", "str"),
        Field(name="players", type="refs", ref="player"),
        _f("per_author", "int", minimum=1),
        _f("seeds", "int", minimum=1),
        _f("harden_rounds", "int", **_NONNEG),
        _f("domains", "tags"),
        _f("self_play", "bool"),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("created_at", "time"),
    ),
    "environment": (
        _f("title", "str"),
        _ref("author", "player", nullable=True),
        _f("source", "str"),
        _f("created_at", "time"),
        _f("validation", "object", nullable=True),
        # Optional (older files lack it): the design key, SHA-256 of the normalised source; an
        # import checks it and files the environment under that design (merging into it).
        _f("content_hash", "str", nullable=True, optional=True),
        # Optional (older files lack them): the kind of environment, its benchmark seeds, and
        # its place in a study: the study, the slot, the revision after play (0 = first), the
        # version it revises, and the version's name (`env_003/harden_01`, derived).
        _f("domain", "str", optional=True, default=""),
        _f("benchmark_seeds", "list", nullable=True, optional=True),
        Field(name="study", type="ref", path="study__uuid", ref="study", nullable=True,
              optional=True),
        _f("slot", "str", optional=True, default=""),
        _f("revision", "int", optional=True, default=0, **_NONNEG),
        Field(name="parent", type="ref", path="parent__uuid", ref="environment", nullable=True,
              optional=True),
        Field(name="version", type="str", path="version", optional=True, default="",
              derived=True),
        # Optional (older files lack them): an imported class's own interface (docs/panels.md).
        _f("contract", "str", optional=True, default="envduels", choices=tuple(Contract.values)),
        _f("class_name", "str", optional=True, default=""),
    ),
    "hint": (
        _ref("environment", "environment"),
        _ref("author", "player", nullable=True),
        _f("text", "str"),
        # Optional (older files lack it): 1 for `hint`/`hint_1`, 2 for the graded `hint_2`.
        _f("level", "int", optional=True, default=1, minimum=1),
    ),
    "tournament": (
        _f("name", "str"),
        Field(name="players", type="refs", ref="player"),
        _f("rounds", "int", minimum=1),
        _f("attempts", "int", minimum=1),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("created_at", "time"),
    ),
    "duel": (
        _ref("tournament", "tournament", nullable=True),
        _ref("a", "player"),
        _ref("b", "player"),
        _ref("env_a", "environment", nullable=True),
        _ref("env_b", "environment", nullable=True),
        _ref("hint_a", "hint", nullable=True),
        _ref("hint_b", "hint", nullable=True),
        _f("attempts", "int", minimum=1),
        _f("observe", "bool"),
        _f("status", "str", choices=_STATUSES),
        _f("outcome", "str", nullable=True, choices=tuple(Outcome.values)),
        _f("created_at", "time"),
        _f("finished_at", "time", nullable=True),
        # Optional (older files lack them): why a side was forfeited, "" when it was not.
        # Absent, a side without an environment or with an invalid one is forfeited.
        _f("forfeit_a", "str", nullable=True),
        _f("forfeit_b", "str", nullable=True),
        # Optional: why a side was voided after play, "" when it was not (absent: not voided).
        _f("void_a", "str", nullable=True),
        _f("void_b", "str", nullable=True),
    ),
    "episode": (
        _ref("duel", "duel", nullable=True),
        # Optional (older files lack it): the study whose field play this is.
        Field(name="study", type="ref", path="study__uuid", ref="study", nullable=True,
              optional=True),
        _ref("environment", "environment"),
        _ref("hint", "hint", nullable=True),
        _ref("solver", "player"),
        _f("seed", "int"),
        _f("status", "str", choices=_STATUSES),
        _f("success", "bool", nullable=True),
        _f("steps", "int", **_NONNEG),
        _f("input_tokens", "int", **_NONNEG),
        _f("output_tokens", "int", **_NONNEG),
        _f("cost", "number", **_NONNEG),
        _f("cache_read_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("cache_write_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("started_at", "time", nullable=True),
        _f("finished_at", "time", nullable=True),
        _f("error", "str"),
    ),
    "step": (
        _ref("episode", "episode"),
        _f("index", "int", **_NONNEG),
        _f("observation", "str"),
        _f("reply", "str"),
        _f("action", "str"),
        _f("reward", "number", nullable=True),
        _f("done", "bool"),
        _f("success", "bool"),
        _f("latency_ms", "int", **_NONNEG),
        _f("input_tokens", "int", **_NONNEG),
        _f("output_tokens", "int", **_NONNEG),
        _f("format_error", "str"),
        # Optional (older files lack them): the model's reasoning and its prompt-cache use.
        _f("thinking", "str", optional=True, default=""),
        _f("cache_read_tokens", "int", optional=True, default=0, **_NONNEG),
        _f("cache_write_tokens", "int", optional=True, default=0, **_NONNEG),
        # Optional: time inside the environment's call, and the model call's cost (USD).
        _f("sandbox_ms", "int", optional=True, default=0, **_NONNEG),
        _f("cost", "number", optional=True, default=0.0, **_NONNEG),
    ),
    "annotation": (
        _f("target_kind", "str", choices=tuple(TargetKind.values)),
        Field(name="target", type="target"),
        _f("index", "int", path="step_index", nullable=True, **_NONNEG),
        _f("author", "str", path="author__username"),
        _f("tags", "tags"),
        _f("rating", "int", nullable=True, minimum=1),
        _f("text", "str"),
        _f("line_start", "int", nullable=True, minimum=1),
        _f("line_end", "int", nullable=True, minimum=1),
        _f("created_at", "time"),
    ),
    "transfer": (
        _ref("learner", "player"),
        _ref("environment", "environment", nullable=True),
        _ref("author", "player", nullable=True),
        _f("benchmark", "str"),
        _f("before", "number"),
        _f("after", "number"),
    ),
    # Team annotation (docs/annotating.md): designs are named by content hash, people by name.
    "rubric": (
        _f("name", "str"),
        _f("lineage", "uuid"),
        _f("version", "int", minimum=1),
        _f("description", "str"),
        _f("questions", "list"),
        _f("created_at", "time"),
    ),
    "queue": (
        _f("name", "str"),
        _ref("rubric", "rubric"),
        # The queue's own kind (single or pairwise); "kind" names the record's kind.
        _f("queue_kind", "str", path="kind", choices=tuple(QueueKind.values)),
        _f("pair_question", "str"),
        _f("overlap", "int", minimum=1),
        _f("selection", "object"),
        _f("designs", "tags"),
        _f("pairs", "list"),
        Field(name="annotators", type="names"),
        _f("created_at", "time"),
        # Optional (older files lack them): what the items are — design content hashes,
        # episode uuids or steps ("<episode uuid>:<index>") — and the annotators' guidelines.
        _f("item_kind", "str", choices=tuple(ItemKind.values), optional=True, default="design"),
        _f("guidelines", "str", optional=True, default=""),
    ),
    "answer": (
        _ref("queue", "queue"),
        _ref("rubric", "rubric"),
        _f("rubric_version", "int", path="rubric__version", minimum=1),
        _f("annotator", "str", path="annotator__username"),
        _f("design", "str"),
        _f("design_b", "str"),
        _f("values", "object"),
        _f("choice", "str", choices=("", "a", "b", "tie")),
        _f("created_at", "time"),
    ),
    "adjudication": (
        _ref("queue", "queue"),
        _f("design", "str"),
        _f("question", "str"),
        _f("value", "json", nullable=True),
        _f("note", "str"),
        _f("decided_by", "str", path="decided_by__username", nullable=True),
        _f("created_at", "time"),
    ),
}
# Other rooms' kinds join SCHEMA, MODELS and KIND_ORDER through duels/exchange/record_kinds.py.
KIND_ORDER: list[str] = list(SCHEMA)
MODELS: dict[str, type[models.Model]] = {
    "player": Player,
    "study": Study,
    "environment": Environment,
    "hint": Hint,
    "tournament": Tournament,
    "duel": Duel,
    "episode": Episode,
    "step": Step,
    "annotation": Annotation,
    "transfer": TransferResult,
    "rubric": Rubric,
    "queue": AnnotationQueue,
    "answer": Answer,
    "adjudication": Adjudication,
}
