"""Demo annotation data for `make screenshots`: a design-review queue that two people worked
(with a disagreement to settle) and a pairwise queue of the finished tournament's designs judged
by both. Four variants of the documented dial-lock example, written "by a person", join the
review queue so that agreement has enough designs for an interval.

Run inside the throw-away installation: `manage.py shell -c "…; annotating_demo_make()"`.
Answers are drawn from each design's measured figures with noise, as people would disagree.
"""

from __future__ import annotations

import random
from pathlib import Path

from django.contrib.auth import get_user_model

from duels.models import Environment, EnvironmentEstimate, Tournament
from duels.services.answers import answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default


def _gain(design: str) -> float:
    row = (EnvironmentEstimate.objects.filter(environment__content_hash=design)
           .values_list("training", flat=True).first()) or {}
    return row.get("hint_gain") or 0.0


EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "dial_lock.py"


def _dial_lock_variants() -> None:
    source = EXAMPLE.read_text()
    for tries in (10, 15, 20, 25):
        Environment.objects.get_or_create(
            title=f"Dial lock, {tries} tries", family="lock",
            defaults={"source": source.replace("max_steps = 30", f"max_steps = {tries}")})


def annotating_demo_make(*, lead: str, colleague: str, tournament: str) -> None:
    """Create both queues; `lead` leaves one design of the review queue for the screenshot."""
    rng = random.Random(7)
    _dial_lock_variants()
    users = get_user_model().objects
    lead_user = users.get(username=lead)
    other, _ = users.get_or_create(username=colleague)
    rubric = rubric_default()
    review = queue_create(user=lead_user, name="Design review", rubric=rubric,
                          selection=QueueSelection(), annotators=[lead_user, other], overlap=2)
    for index, design in enumerate(review.designs):
        gain = _gain(design)
        for person in (other, lead_user):
            if person is lead_user and index == len(review.designs) - 1:
                continue  # left for the screenshot of the work page
            rating = min(5, max(1, round(2.5 + 3 * gain + rng.gauss(0, 0.8))))
            labels = ["needs-hint"] if gain > 0.2 else ["trivial"] if rng.random() < 0.5 else []
            if rng.random() < 0.15:
                labels.append("broken")
            answer_save(user=person, queue=review, index=index,
                        values={"rating": rating, "labels": labels})
    played = Tournament.objects.get(name=tournament)
    pairwise = queue_create(user=lead_user, name="Which hint is more useful?", rubric=rubric,
                            selection=QueueSelection(source="tournament", tournament=played.uuid),
                            annotators=[lead_user, other], overlap=2, kind="pairwise",
                            pair_question="rating")
    for index, (left, right) in enumerate(pairwise.pairs):
        for person in (lead_user, other):
            margin = _gain(left) - _gain(right) + rng.gauss(0, 0.25)
            choice = "tie" if abs(margin) < 0.05 else "a" if margin > 0 else "b"
            answer_save(user=person, queue=pairwise, index=index, choice=choice)
    print(f"{review.uuid} {pairwise.uuid}")
