"""EnvDuels data model, one module per responsibility, re-exported here.

Names follow the vocabulary and the exchange table in docs/.
"""

from duels.models.accounts import RateBucket, SignInFailure
from duels.models.annotations import STARTER_TAGS, Annotation, TargetKind
from duels.models.common import DONE_STATUSES, Status
from duels.models.duels import Duel, Outcome, Tournament
from duels.models.environments import (
    Contract,
    Environment,
    EnvironmentStatus,
    Hint,
    content_hash,
)
from duels.models.episodes import Condition, EndReason, Episode, ModelCall, Proof, Step
from duels.models.estimates import EnvironmentEstimate
from duels.models.evaluations import Evaluation, PanelFigures
from duels.models.panels import (
    OutcomeStatus,
    OutsideOutcome,
    Panel,
    PanelEntry,
    PanelFrozen,
    PanelOrigin,
)
from duels.models.players import Player, Provider, builtin_player_uuid
from duels.models.rubrics import (
    Adjudication,
    AnnotationQueue,
    Answer,
    ItemKind,
    QuestionKind,
    QueueKind,
    QueueResults,
    Rubric,
)
from duels.models.studies import SlotPhase, Study, StudySlot
from duels.models.tokens import ApiToken, TokenScope
from duels.models.transfer import AnalyticsSnapshot, TransferResult
from duels.models.workers import WorkerHeartbeat

__all__ = [
    "Status",
    "DONE_STATUSES",
    "Provider",
    "Player",
    "builtin_player_uuid",
    "EnvironmentStatus",
    "content_hash",
    "Contract",
    "Environment",
    "Hint",
    "EnvironmentEstimate",
    "Tournament",
    "Study",
    "StudySlot",
    "SlotPhase",
    "Panel",
    "Evaluation",
    "PanelFigures",
    "PanelEntry",
    "PanelFrozen",
    "PanelOrigin",
    "OutsideOutcome",
    "OutcomeStatus",
    "Outcome",
    "Duel",
    "ModelCall",
    "Condition",
    "EndReason",
    "Episode",
    "Proof",
    "Step",
    "TargetKind",
    "STARTER_TAGS",
    "Annotation",
    "QuestionKind",
    "Rubric",
    "QueueKind",
    "QueueResults",
    "ItemKind",
    "AnnotationQueue",
    "Answer",
    "Adjudication",
    "TransferResult",
    "AnalyticsSnapshot",
    "ApiToken",
    "TokenScope",
    "WorkerHeartbeat",
    "RateBucket",
    "SignInFailure",
]
