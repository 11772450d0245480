"""A slot's story: a study of built-in players, run here, tells for each slot what its author was
asked and answered, how validation judged it, the digest it read before hardening, what it
answered then and the diff between its versions; a malformed answer and its repair are placed
in the story by the slot and round their prompt names; every byte from a model is escaped."""

from __future__ import annotations

import html

import pytest

from duels.models import Environment, ModelCall, StudySlot
from duels.players import prompts
from duels.studies.hardening import version_field_digest
from duels.studies.results import study_figures_refresh
from tests.helpers.plays_links import assert_links_open_their_plays
from tests.helpers.studies import builtin_players, study_run
from tests.helpers.study_data import played_study


@pytest.mark.django_db(transaction=True)
def test_the_story_tells_a_builtin_slot_from_prompt_to_revision(study_sandbox, client, staff):
    study = study_run(players=builtin_players(("builtin-rookie", "builtin-architect",
                                               "builtin-ace")),
                      seeds=2, harden_rounds=1, domains=("cipher",))
    study_figures_refresh(study=study, resamples=20)
    client.force_login(staff)
    slot = StudySlot.objects.get(study=study, author__name="builtin-architect")
    first, revised = Environment.objects.filter(study=study, author=slot.author,
                                                slot=slot.slot).order_by("revision")
    page = client.get(f"/studies/{study.uuid}/slots/{slot.lineage}/")
    assert page.status_code == 200
    text = page.content.decode()
    answer = ModelCall.objects.get(study=study, environment=first)
    hardening = ModelCall.objects.get(study=study, environment=revised)
    # What it was asked and answered, escaped as the page shows every model's byte.
    assert f"domain <strong>{slot.domain}</strong>" in text
    assert study.prompt_version and f"<code>{study.prompt_version}</code>" in text
    assert html.escape(answer.reply).strip()[:400] in text
    assert html.escape(hardening.reply).strip()[:400] in text
    # The validation's verdict, the digest read before hardening, the diff between versions.
    assert text.count('class="story-verdict"><span class="badge ok">valid</span>') == 2
    digest = version_field_digest(version=first)
    assert html.escape(digest) in text and "Pass rate without hint" in digest
    assert 'data-diff="source"' in text and 'class="diff-add"' in text
    assert text.index('id="version-0"') < text.index('id="version-1"')
    # Reached from the study page's lineage table and matrix, and the environment page.
    study_page = client.get(f"/studies/{study.uuid}/").content.decode()
    story_url = f"/studies/{study.uuid}/slots/{slot.lineage}/"
    assert study_page.count(f'href="{story_url}"') == 2
    assert f'href="{story_url}"' in client.get(f"/environments/{revised.uuid}/").content.decode()
    # The field's play per solver and condition, each opening exactly its plays.
    assert 'class="table story-pairs"' in text
    assert assert_links_open_their_plays(client, text) >= 2 * 3 * 2
    assert assert_links_open_their_plays(client, study_page) >= 3 * 3 * 2


@pytest.mark.django_db
def test_a_malformed_answer_and_its_repair_are_told_in_their_place(owner_client):
    study = played_study(harden=True)
    slot = StudySlot.objects.select_related("author").get(study=study, author__name="beta")
    first, revised = Environment.objects.filter(study=study, author=slot.author).order_by(
        "revision")
    asked = prompts.hardening_messages(
        python_version="3.11.2", domain="maze", slot=slot.slot, round_index=1,
        digest="Pass rate without hint: 100%", source=first.source, hint="old hint")
    malformed = "<script>alert(1)</script> no code block here"
    ModelCall.objects.create(study=study, player=slot.author, role=ModelCall.Role.SETTER,
                             messages=asked, reply=malformed)
    repair = [*asked, {"role": "assistant", "content": malformed},
              prompts.repair_message(error="no ```python block")]
    ModelCall.objects.create(study=study, player=slot.author, role=ModelCall.Role.REPAIR,
                             messages=repair, reply="<think>try again</think>TITLE: fixed",
                             environment=revised, thinking="the fence was missing")
    # Another slot's call never strays into this story.
    other = StudySlot.objects.get(study=study, author__name="alpha")
    ModelCall.objects.create(study=study, player=other.author, role=ModelCall.Role.SETTER,
                             messages=asked, reply="alpha's answer")
    text = owner_client.get(f"/studies/{study.uuid}/slots/{slot.lineage}/").content.decode()
    revision = text[text.index('id="version-1"'):]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in revision and "<script>alert" not in text
    assert "EnvDuels asked again" in revision and prompts.REPAIR_LINE in revision
    assert "the fence was missing" in revision and "try again" in revision
    assert "Pass rate without hint: 100%" in revision  # the digest from the stored prompt
    assert "alpha&#x27;s answer" not in text and "alpha's answer" not in text
    # The first version's calls were not stored here: the page says so.
    first_part = text[text.index('id="version-0"'):text.index('id="version-1"')]
    assert "No setter call is stored for this version." in first_part
    # gamma's revision has no stored prompt: its digest is recomputed from the plays, and said so.
    gamma = owner_client.get(f"/studies/{study.uuid}/slots/gamma/env_001/").content.decode()
    assert "the digest below is recomputed" in gamma and "Version: env_001" in gamma


@pytest.mark.django_db
def test_an_unknown_slot_is_a_404(owner_client):
    study = played_study(harden=False)
    assert owner_client.get(f"/studies/{study.uuid}/slots/alpha/env_001/").status_code == 200
    for missing in ("nobody/env_001", "alpha/env_009", "env_001"):
        assert owner_client.get(f"/studies/{study.uuid}/slots/{missing}/").status_code == 404
