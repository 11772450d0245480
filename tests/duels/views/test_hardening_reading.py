"""Hardening's change of the unhinted pass rate: a fall is never coloured as bad (lower is the
goal), and the sentence under it says plainly whether its interval includes 0, read from the
same interval the page prints."""

from __future__ import annotations

import re

import pytest

from duels.models import Study
from duels.studies.results import study_figures_refresh
from duels.templatetags.duels_format import crosses_zero, tone
from tests.helpers.study_data import played_study

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("value", [-0.5, -0.01, 0.0, 0.01, 0.5])
def test_the_tone_of_a_change_follows_its_goal(value):
    higher, lower = tone(value), tone(value, "lower")
    assert (higher, lower) == (("good", "bad") if value > 0 else ("bad", "good") if value < 0
                               else ("", ""))


@pytest.mark.parametrize(("interval", "crosses"), [
    ([-0.3, 0.1], True), ([-0.3, -0.1], False), ([0.0, 0.2], True), ([0.1, 0.2], False),
    ([None, 0.1], False), (None, False)])
def test_an_interval_crosses_zero_when_it_holds_it(interval, crosses):
    assert crosses_zero(interval) is crosses


@pytest.mark.parametrize("interval", [[-0.4, 0.1], [-1.0, -0.6], [0.2, 0.5]])
def test_the_page_reads_the_change_from_its_interval(owner_client, interval):
    study = played_study()
    study_figures_refresh(study=study, resamples=50)
    figures = Study.objects.get(pk=study.pk).figures
    change = figures["hardening_first_to_final"]
    # The interval as the stored figures would hold it (the change itself as computed: -1).
    change["intervals"]["p_unhinted_change"] = interval
    change["p_unhinted_change"] = sum(interval) / 2
    Study.objects.filter(pk=study.pk).update(figures=figures)
    text = owner_client.get(f"/studies/{study.uuid}/").text
    strong = re.search(r'change <strong class="num ([a-z]*)">', text).group(1)
    reading = text.split('id="hardening-reading">')[1].split("</p>")[0]
    low, high = interval
    if low <= 0 <= high:
        assert "includes 0" in reading and strong == ""
    elif high < 0:
        assert "below 0: the revisions are harder" in reading and strong == "good"
    else:
        assert "above 0: the revisions are easier" in reading and strong == "bad"
