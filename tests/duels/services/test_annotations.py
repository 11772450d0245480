"""Annotation services: validation and the access rules (author edits, author or staff deletes)."""

from __future__ import annotations

import pytest

from duels.models import TargetKind
from duels.selectors.annotations import annotated_line_ranges, annotation_tags_in_use
from duels.services.annotations import (
    AnnotationError,
    AnnotationInput,
    annotation_create,
    annotation_delete,
    annotation_update,
)

pytestmark = pytest.mark.django_db


def test_tags_are_normalised_and_offered_for_autocomplete(owner, make):
    note = annotation_create(author=owner, environment=make.environment(),
                             data=AnnotationInput(tags=(" Needs Hint ", "needs-hint", "x:y")))
    assert note.tags == ["needs-hint", "x:y"]
    assert note.target_kind == TargetKind.ENVIRONMENT
    assert {"x:y", "needs-hint", "duplicate-design"} <= set(annotation_tags_in_use())


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (AnnotationInput(tags=("<script>",)), "is not allowed"),
        (AnnotationInput(rating=6), "from 1 to 5"),
        (AnnotationInput(line_start=4, line_end=2), "later"),
        (AnnotationInput(line_end=2), "first line"),
        (AnnotationInput(text="x" * 10_001), "limited"),
    ],
)
def test_bad_input_is_refused(owner, make, data, message):
    with pytest.raises(AnnotationError, match=message):
        annotation_create(author=owner, environment=make.environment(), data=data)


def test_line_ranges_only_on_environments_and_merge(owner, make):
    environment = make.environment()
    for start, end in ((2, 3), (4, 5), (9, 9)):
        annotation_create(author=owner, environment=environment,
                          data=AnnotationInput(line_start=start, line_end=end))
    assert annotated_line_ranges(environment=environment) == [(2, 5), (9, 9)]
    with pytest.raises(AnnotationError, match="environment notes only"):
        annotation_create(author=owner, episode=make.episode(),
                          data=AnnotationInput(line_start=1))


def test_only_author_updates_author_or_staff_deletes(owner, teammate, staff, make):
    note = annotation_create(author=owner, environment=make.environment(),
                             data=AnnotationInput(text="first"))
    with pytest.raises(AnnotationError, match="Only the author"):
        annotation_update(annotation=note, user=staff, data=AnnotationInput(text="staff edit"))
    annotation_update(annotation=note, user=owner, data=AnnotationInput(text="second", rating=2))
    note.refresh_from_db()
    assert (note.text, note.rating) == ("second", 2)
    with pytest.raises(AnnotationError, match="staff member"):
        annotation_delete(annotation=note, user=teammate)
    annotation_delete(annotation=note, user=staff)
    assert not type(note).objects.exists()
