"""Only operators (staff, or the operators group) start duels; everyone signed in annotates."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from duels.models import Duel
from duels.services.roles import RoleError, operator_add, operator_list, operator_remove

pytestmark = pytest.mark.django_db


def form_data(a, b):
    return {"a": str(a.uuid), "b": str(b.uuid), "attempts": 2}


def test_an_annotator_is_refused_the_form_and_the_post_with_the_fix(client, teammate, make):
    a, b = make.player(), make.player()
    client.force_login(teammate)
    page = client.get("/duels/new/")
    assert page.status_code == 403
    assert "Only operators start duels" in page.text
    assert "manage.py operators add" in page.text
    assert client.post("/duels/new/", form_data(a, b)).status_code == 403
    assert Duel.objects.count() == 0
    # The duel list offers no button they cannot use.
    assert "New duel" not in client.get("/duels/").text


def test_operators_and_staff_may_start_duels(client, owner, teammate, staff, make):
    a, b = make.player(), make.player()
    for user in (owner, staff):
        client.force_login(user)
        assert client.get("/duels/new/").status_code == 200
        assert "New duel" in client.get("/duels/").text
    assert client.post("/duels/new/", form_data(a, b)).status_code == 302
    assert Duel.objects.get().created_by == staff


def test_the_command_adds_and_removes_an_operator(client, teammate, make, capsys):
    client.force_login(teammate)
    call_command("operators", "add", "teammate")
    assert "teammate may start duels" in capsys.readouterr().out
    assert client.get("/duels/new/").status_code == 200
    assert "teammate" in operator_list()
    assert operator_add(username="teammate") is False
    call_command("operators", "remove", "teammate")
    assert client.get("/duels/new/").status_code == 403
    assert operator_remove(username="teammate") is False
    with pytest.raises(RoleError, match="No account named 'nobody'"):
        operator_add(username="nobody")


def test_an_inactive_operator_cannot_start_duels(client, owner):
    owner.is_active = False
    owner.save()
    assert client.get("/duels/new/").status_code == 302  # signed out: to the login page


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_existing_accounts_able_to_start_duels(django_user_model):
    executor = MigrationExecutor(connection)
    executor.migrate([("duels", "0017_default_rubric")])
    apps = executor.loader.project_state([("duels", "0017_default_rubric")]).apps
    user_model = apps.get_model("auth", "User")
    user_model.objects.create(username="early", password="!")
    user_model.objects.create(username="left", password="!", is_active=False)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert operator_list() == ["early"]
