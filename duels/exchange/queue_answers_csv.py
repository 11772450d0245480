"""A queue's answers as CSV, one row per answer, for a spreadsheet or a notebook.

Columns: the queue, what its items are, the item (its key and how the pages name it), the
annotator, the rubric and the version answered, each question of the queue's rubric by its
key (several labels joined by "; "), a pairwise queue's second item and choice, and when the
answer was given and last changed. A cell that a spreadsheet would read as a formula (it starts
with =, +, -, @ or a tab) is written with a leading apostrophe: titles and notes come from
models and people.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

from duels.exchange.export import iso_time
from duels.exchange.identities import author_plain_name
from duels.models import AnnotationQueue, Answer
from duels.selectors.queue_items import queue_item_views

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
ANSWERS_PER_QUERY = 500


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        value = "; ".join(str(item) for item in value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def queue_answers_csv_lines(*, queue: AnnotationQueue) -> Iterator[str]:
    """The CSV text, a line at a time (answers read a chunk at a time)."""
    keys = [q["key"] for q in queue.rubric.questions]
    header = ["queue", "item_kind", "item", "item_label", "annotator", "rubric",
              "rubric_version", *keys]
    if queue.is_pairwise:
        header += ["item_b", "item_b_label", "choice"]
    header += ["created_at", "updated_at"]
    views = queue_item_views(queue=queue, keys=queue.designs)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")

    def line(row: list[Any]) -> str:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow([_cell(value) for value in row])
        return buffer.getvalue()

    yield line(header)
    answers = (Answer.objects.filter(queue=queue).select_related("annotator", "rubric")
               .order_by("created_at", "pk"))
    for answer in answers.iterator(chunk_size=ANSWERS_PER_QUERY):
        view = views.get(answer.design)
        row = [queue.name, queue.item_kind, answer.design, view.label if view else "",
               author_plain_name(answer.annotator.get_username()), answer.rubric.name,
               answer.rubric.version, *(answer.values.get(key) for key in keys)]
        if queue.is_pairwise:
            other = views.get(answer.design_b)
            row += [answer.design_b, other.label if other else "", answer.choice]
        row += [iso_time(answer.created_at), iso_time(answer.updated_at)]
        yield line(row)
