"""A line note belongs to the design: it shows beside the lines of every copy."""

from __future__ import annotations

import pytest

from duels.selectors.source_view import environment_source_lines
from duels.services.annotations import AnnotationInput, annotation_create

pytestmark = pytest.mark.django_db


def test_a_line_note_on_one_copy_shows_beside_the_lines_of_another(make, owner):
    first = make.environment(title="Original")
    copy = make.environment(title="Copy", source=first.source)
    other = make.environment(title="Other design")
    annotation_create(author=owner, environment=first,
                      data=AnnotationInput(text="off by one here", line_start=3, line_end=4))
    rows = environment_source_lines(environment=copy)
    assert [row.number for row in rows if row.noted] == [3, 4]
    assert [note.snippet for note in rows[2].notes] == ["off by one here"]
    assert not any(row.noted for row in environment_source_lines(environment=other))
