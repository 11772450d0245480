"""Copies of one source are one design: planted duplicates by one author and by two authors."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import pytest
from django.urls import reverse

from duels.analytics.compute import analytics_compute
from duels.exchange.export import exchange_export
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_for_environments
from duels.models import Environment, content_hash
from duels.selectors.analytics import analytics_input
from duels.selectors.annotations import annotations_for_environment, review_queue
from duels.selectors.designs import design_get, design_list
from duels.selectors.environments import environment_list
from duels.services.annotations import AnnotationInput, annotation_create
from tests.factories import TRIVIAL_SOURCE

pytestmark = pytest.mark.django_db

# The same code as it arrives from different setters: other line endings, trailing blanks.
CRLF_COPY = TRIVIAL_SOURCE.replace("\n", "\r\n") + "   \r\n\r\n"
SPACED_COPY = TRIVIAL_SOURCE.replace(":\n", ":  \n")


def test_line_endings_and_trailing_whitespace_do_not_make_another_design():
    assert content_hash(CRLF_COPY) == content_hash(SPACED_COPY) == content_hash(TRIVIAL_SOURCE)
    assert content_hash(TRIVIAL_SOURCE.replace("seed % 3", "seed % 4")) != content_hash(
        TRIVIAL_SOURCE)
    # Leading whitespace is code in Python: it stays significant.
    assert content_hash(" " + TRIVIAL_SOURCE.lstrip()) != content_hash(TRIVIAL_SOURCE.lstrip())


@pytest.fixture
def planted(make):
    """One author's design played in three duels (three copies), another design written by two
    authors (two copies), and one design of its own."""
    ace, cautious, rival = (make.player(name=name) for name in ("ace", "cautious", "rival"))
    solo = [make.environment(author=ace, title="Lights out", source=source)
            for source in (TRIVIAL_SOURCE, CRLF_COPY, SPACED_COPY)]
    shared_source = TRIVIAL_SOURCE.replace("seed % 3", "seed % 5")
    shared = [make.environment(author=author, title=title, source=shared_source)
              for author, title in ((cautious, "Vault"), (rival, "Safe"))]
    single = make.environment(author=rival, title="Single")
    duels = [make.finished_duel(a=ace, b=cautious, env_a=copy, unhinted_a=(False, False),
                                hinted_a=(True, True)) for copy in solo]
    return {"solo": solo, "shared": shared, "single": single, "duels": duels,
            "players": (ace, cautious, rival)}


def test_lists_and_the_review_queue_count_designs(planted):
    # Three planted designs plus the opponents' own environments of the three duels.
    designs = 3 + 3
    assert Environment.objects.count() == 3 + 2 + 1 + 3
    assert design_list().count() == environment_list().count() == designs
    assert review_queue().count() == designs
    first = {row.content_hash: row for row in design_list()}
    solo_row = first[planted["solo"][0].content_hash]
    assert (solo_row.pk, solo_row.copies, solo_row.author_count) == (planted["solo"][0].pk, 3, 1)
    shared_row = first[planted["shared"][0].content_hash]
    assert (shared_row.copies, shared_row.author_count) == (2, 2)


def test_pass_rates_pool_every_copy(planted):
    row = environment_list().get(pk=planted["solo"][0].pk)
    # cautious failed each copy unhinted on both seeds and passed hinted: 6 + 6 episodes.
    assert (row.p_unhinted, row.p_hinted, row.episode_count) == (0.0, 1.0, 12)


def test_a_note_on_one_copy_shows_on_every_copy_and_leaves_the_queue(planted, owner,
                                                                    owner_client):
    solo = planted["solo"]
    annotation_create(author=owner, environment=solo[2], data=AnnotationInput(text="Seen it."))
    for copy in solo:
        assert [note.text for note in annotations_for_environment(environment=copy)] == [
            "Seen it."]
        panel = owner_client.get(reverse("duels:environment_annotations", args=[copy.uuid]))
        assert "Seen it." in panel.content.decode()
    assert solo[0].content_hash not in set(review_queue().values_list("content_hash", flat=True))


def test_the_environment_page_shows_the_design(planted, owner_client):
    solo = planted["solo"]
    page = owner_client.get(reverse("duels:environment_detail", args=[solo[1].uuid]))
    text = page.content.decode()
    assert "This source was written 3 times" in text
    assert "Duels it was played in (3)" in text
    for duel in planted["duels"]:
        assert str(duel.uuid) in text
    assert "design-convergent" not in text  # one author wrote all three copies
    assert "12/12" not in text and "0/6" in text and "6/6" in text  # pooled per condition
    shared = owner_client.get(reverse("duels:environment_detail",
                                      args=[planted["shared"][1].uuid])).content.decode()
    assert 'id="design-convergent"' in shared and "2 authors wrote this same code" in shared
    assert "cautious" in shared and "rival" in shared


def test_the_list_page_names_designs_with_all_their_authors(planted, owner_client):
    text = owner_client.get(reverse("duels:environment_list")).content.decode()
    assert text.count(">Lights out</a>") == 1
    assert "3 copies" in text and "convergent" in text


def test_analytics_count_designs_and_pool_their_episodes(planted):
    data = analytics_input()
    result = analytics_compute(data, resamples=50)
    design_count = design_list().count()
    assert result["summary"]["environments"] == Environment.objects.count()
    assert result["summary"]["designs"] == design_count
    irt_items = {row["uuid"] for row in result["irt"]["environments"]}
    solo, shared = planted["solo"], planted["shared"]
    assert str(solo[0].uuid) in irt_items
    assert not {str(copy.uuid) for copy in solo[1:]} & irt_items
    assert len(irt_items) <= design_count
    gains = {row["uuid"]: row for row in result["environments"]}
    assert gains[str(solo[0].uuid)]["episodes"] == 12
    assert gains[str(solo[0].uuid)]["content_hash"] == solo[0].content_hash
    assert result["convergence"]["environments"] == design_count
    # The design two authors wrote is in a cross-author cluster, once, under its first copy.
    cross = [c for c in result["convergence"]["clusters"]
             if str(shared[0].uuid) in c["environments"]]
    assert cross and {"cautious", "rival"} <= set(cross[0]["authors"])
    assert str(shared[1].uuid) not in cross[0]["environments"]
    assert result["findings"][3]["n"] == design_count
    labels = result["figures"]["hint-gain"]["figure"]["data"][0]["y"]
    assert f"Lights out · ace · {solo[0].content_hash[:6]}" in labels


def test_the_joint_model_narrows_a_design_it_pools(planted):
    """Fitted per copy the design's difficulty rests on a third of its data; as one item its
    interval is narrower."""
    data = analytics_input()
    pooled = analytics_compute(data, resamples=50)["irt"]["environments"]
    # The same data with every row its own design, as before designs existed.
    split = analytics_compute(replace(data, environments=tuple(
        env._replace(content_hash="") for env in data.environments)),
        resamples=50)["irt"]["environments"]
    solo = str(planted["solo"][0].uuid)

    def width(rows):
        row = next(row for row in rows if row["uuid"] == solo)
        return row["d_high"] - row["d_low"]

    assert width(pooled) < width(split)


def test_export_carries_the_hash_and_an_import_merges_into_the_design(planted):
    solo = planted["solo"][0]
    out = io.StringIO()
    exchange_export(querysets=exchange_for_environments(
        environments=Environment.objects.filter(pk=solo.pk)), out=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    exported = [r for r in lines if r.get("kind") == "environment"]
    # Every copy of the design travels, each with the design's hash.
    assert {r["content_hash"] for r in exported} == {solo.content_hash} and len(exported) == 3

    # The same design from another installation: new uuids, its own line endings.
    other = dict(exported[0], uuid="6f1c2a9e-0000-4000-8000-000000000001",
                 source=TRIVIAL_SOURCE.replace("\n", "\r\n"))
    player = next(r for r in lines if r.get("kind") == "player" and r["uuid"] == other["author"])
    text = "\n".join(json.dumps(r) for r in ({"format": "envduels.v1"}, player, other)) + "\n"
    exchange_import(stream=io.BytesIO(text.encode()))
    imported = Environment.objects.get(uuid=other["uuid"])
    assert imported.content_hash == solo.content_hash
    assert design_get(environment=imported).first == solo
    assert len(design_get(environment=imported).copies) == 4

    forged = dict(other, uuid="6f1c2a9e-0000-4000-8000-000000000002", content_hash="0" * 64)
    text = "\n".join(json.dumps(r) for r in ({"format": "envduels.v1"}, player, forged)) + "\n"
    with pytest.raises(ExchangeImportError, match="does not match the source"):
        exchange_import(stream=io.BytesIO(text.encode()))
