"""Labels on the pages: the analytics page states how many designs labels leave out and how the
headline figures move; the flywheel's training set leaves them out unless asked not to."""

from __future__ import annotations

import re

import pytest

from duels.models import Environment
from duels.selectors.training_sets import TrainingSetFilters, training_set_select
from duels.services.analytics import analytics_refresh
from duels.services.answers import answer_save
from duels.services.queues import QueueSelection, queue_create
from duels.services.rubrics import rubric_default
from tests.duels.views.test_flywheel_page import planted

pytestmark = pytest.mark.django_db


def _label_broken(staff, annotators, environment):
    queue = queue_create(user=staff, name="labels", rubric=rubric_default(),
                         selection=QueueSelection(), annotators=annotators, overlap=2)
    index = queue.designs.index(environment.content_hash)
    for annotator in annotators:
        answer_save(user=annotator, queue=queue, index=index,
                    values={"rating": 1, "labels": ["broken"]})


def test_training_set_and_pages_leave_out_a_design_labelled_broken(make, client, staff, owner,
                                                                   teammate):
    planted(make, collapse=False)
    analytics_refresh(resamples=10)
    everything = training_set_select(filters=TrainingSetFilters(size=100, per_cluster=100))
    best = Environment.objects.get(uuid=everything[0].environment)
    _label_broken(staff, [owner, teammate], best)
    kept = training_set_select(filters=TrainingSetFilters(size=100, per_cluster=100))
    assert [item.design for item in kept] == [item.design for item in everything[1:]]
    counted = training_set_select(filters=TrainingSetFilters(size=100, per_cluster=100,
                                                             exclude_labelled=False))
    assert len(counted) == len(everything)

    analytics_refresh(resamples=10)
    client.force_login(owner)
    page = client.get("/analytics/").content.decode()
    assert 'id="labels-effect"' in page
    assert '<strong id="labels-excluded">1 design</strong> is labelled broken' in page
    assert '<td>duels</td><td class="num">6 → <strong>5</strong></td>' in page
    # Each figure by its label with its value formatted, never an internal key or a raw dict.
    card = page[page.index('id="labels-effect"'):page.index("</section>",
                                                            page.index('id="labels-effect"'))]
    assert ": figure" not in card and "{&#x27;" not in card and "&#x27;key&#x27;" not in card
    assert "share of resamples where the top" in card
    assert 'href="/glossary/#p_top_differs"' in card
    cells = re.findall(r'<td class="num">(.*?)</td>', card)
    assert len(cells) >= 15
    number = r"(?:—|[\d,]+|−?\d+\.\d\d|[a-z][\w -]*)"
    for cell in cells:
        assert re.fullmatch(rf"{number} → <strong>{number}</strong>|{number} "
                            r'<span class="small muted">\(unchanged\)</span>', cell), cell
    flywheel = client.get("/flywheel/").content.decode()
    assert "1 design labelled broken or hint-leaking is left out of this set." in flywheel
    flywheel = client.get("/flywheel/?labelled=include").content.decode()
    assert "is counted in this set" in flywheel
