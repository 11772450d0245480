"""The default rubric: the starter tags as a label question, the 1–5 rating and a free note.

Plain data (no imports from models) so the data migration and the services share it.
"""

from __future__ import annotations

# Fixed so that every installation's default rubric merges on import.
DEFAULT_RUBRIC_LINEAGE = "6f0e0e2c-64a4-4d1b-9d5e-3f2f1a0c0d01"
DEFAULT_RUBRIC_UUID = "6f0e0e2c-64a4-4d1b-9d5e-3f2f1a0c0d02"
DEFAULT_RUBRIC_NAME = "Design review"

STARTER_LABELS = (
    "needs-hint",
    "hint-leaks-answer",
    "trivial",
    "impossible",
    "broken",
    "elegant",
    "duplicate-design",
)

# Labels that, adjudicated or held by a majority, can exclude a design from what is counted.
EXCLUDING_LABELS = ("broken", "hint-leaks-answer")

DEFAULT_QUESTIONS = [
    {"key": "labels", "kind": "multi", "prompt": "Which labels apply?",
     "description": "Tick every label that describes the design; none is a valid answer.",
     "labels": list(STARTER_LABELS)},
    {"key": "rating", "kind": "scale", "prompt": "Overall quality",
     "description": "1 = unusable, 5 = a design worth training on.", "scale_max": 5},
    {"key": "note", "kind": "text", "prompt": "Anything else?",
     "description": "Plain text, shown as written."},
]
