"""/healthz (status for anyone, details for staff), /metrics (staff, by session or token, in
Prometheus text), the Workers panel."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from duels.models import ModelCall, Status, TokenScope, WorkerHeartbeat
from duels.services.api_tokens import api_token_create
from duels.tasks import analytics_refresh_task

pytestmark = pytest.mark.django_db


def _heartbeat(worker_id: str, *, seconds_ago: float, host: str = "worker-7") -> None:
    seen = timezone.now() - timedelta(seconds=seconds_ago)
    WorkerHeartbeat.objects.create(worker_id=worker_id, host=host, pid=4242, supervisor_pid=1,
                                   queues="duels,episodes", started_at=seen - timedelta(hours=1),
                                   last_seen_at=seen)


def test_healthz_gives_staff_every_part_and_no_secret(client, settings, staff):
    settings.ENVDUELS_WORKER_HEARTBEAT_SECONDS = 10
    _heartbeat("w-live", seconds_ago=2)
    _heartbeat("w-silent", seconds_ago=120)
    client.force_login(staff)
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"]["ok"] is True
    assert body["channel_layer"]["ok"] is True
    assert set(body["sandbox"]) >= {"configured", "backend", "limits_whole_sandbox", "backends"}
    assert [worker["pid"] for worker in body["workers"]["items"]] == [4242]
    assert body["workers"]["live"] == 1 and body["workers"]["items"][0]["host"] == "worker-7"
    assert body["status"] in {"ok", "degraded"}
    text = response.content.decode()
    assert settings.SECRET_KEY not in text
    assert str(settings.DATABASES["default"].get("PASSWORD") or "no-password-set") not in text


def test_anonymous_healthz_is_the_status_alone(client, owner):
    _heartbeat("w-live", seconds_ago=1, host="gpu-box-9")
    anonymous = client.get("/healthz")
    assert anonymous.status_code == 200
    assert list(anonymous.json()) == ["status"]
    assert anonymous.json()["status"] in {"ok", "degraded"}
    assert "gpu-box-9" not in anonymous.text and "4242" not in anonymous.text
    # The same for a non-staff user, signed in or by token, and for a bad token.
    client.force_login(owner)
    assert client.get("/healthz").json() == anonymous.json()
    client.logout()
    _, raw = api_token_create(user=owner, name="probe")
    for token in (raw, "nonsense"):
        assert client.get("/healthz", HTTP_AUTHORIZATION=f"Bearer {token}").json() == \
            anonymous.json()


def test_healthz_details_for_a_staff_token(client, staff):
    _heartbeat("w-live", seconds_ago=1, host="gpu-box-9")
    _, raw = api_token_create(user=staff, name="monitoring", scope=TokenScope.OPERATE)
    body = client.get("/healthz", HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert body["workers"]["items"][0]["host"] == "gpu-box-9"


def test_healthz_is_degraded_without_live_workers(client):
    assert client.get("/healthz").json()["status"] == "degraded"


def test_metrics_follow_one_rule_for_sessions_and_tokens(client, owner, staff):
    # Every refusal answers 403, whatever the reason (the text says which).
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer nonsense").status_code == 403
    # A non-staff user is refused alike, signed in or by token.
    client.force_login(owner)
    assert client.get("/metrics").status_code == 403
    client.logout()
    _, owner_token = api_token_create(user=owner, name="prometheus")
    refused = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {owner_token}")
    assert refused.status_code == 403 and "staff" in refused.text
    # A staff user is let in alike, signed in or by token.
    _, staff_token = api_token_create(user=staff, name="prometheus", scope=TokenScope.OPERATE)
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {staff_token}").status_code == 200
    client.force_login(staff)
    assert client.get("/metrics").status_code == 200


def test_metrics_count_what_is_stored(client, staff, make):
    solver = make.player(name="solver-x")
    episode = make.episode(steps=3, solver=solver, sandbox_backend="bwrap",
                           sandbox_start_ms=500, sandbox_step_ms=300)
    episode.steps = 3
    episode.save()
    make.episode(status=Status.FAILED, success=None)
    ModelCall.objects.create(player=make.player(name="setter-y"), role="setter",
                             latency_ms=2000, input_tokens=100, output_tokens=40)
    analytics_refresh_task.enqueue()
    client.force_login(staff)
    response = client.get("/metrics")
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.content.decode()
    assert 'envduels_episodes{status="finished"} 1.0' in text
    assert 'envduels_episodes{status="failed"} 1.0' in text
    assert 'envduels_model_call_latency_seconds_sum{player="setter-y",role="setter"} 2.0' in text
    assert 'envduels_model_tokens_total{direction="input",player="setter-y",role="setter"} 100.0' \
        in text
    assert 'envduels_model_call_latency_seconds_count{player="solver-x",role="solver"} 3.0' in text
    assert 'envduels_sandbox_start_seconds_sum{backend="bwrap"} 0.5' in text
    assert 'envduels_sandbox_step_seconds_count{backend="bwrap"} 3.0' in text
    assert 'envduels_task_queue_depth{queue="analytics",status="READY"} 1.0' in text
    assert "envduels_stream_viewers 0.0" in text
    assert "envduels_steps_total 4.0" in text


def test_the_workers_panel_is_for_staff(client, owner, staff):
    _heartbeat("w-live", seconds_ago=1, host="gpu-box-3")
    client.force_login(owner)
    assert client.get("/workers/").status_code == 403  # the app's own refusal page
    client.force_login(staff)
    page = client.get("/workers/").content.decode()
    assert "gpu-box-3" in page and "duels, episodes" in page and "live" in page
    assert settings.SECRET_KEY not in page


def test_healthz_on_a_database_without_tables_says_what_to_run(client, monkeypatch, staff):
    from django.db import OperationalError

    def no_table():
        raise OperationalError("no such table: duels_workerheartbeat")

    monkeypatch.setattr("duels.selectors.operations.workers_live", no_table)
    client.force_login(staff)
    body = client.get("/healthz").json()
    assert body["status"] == "degraded" and body["workers"]["live"] is None
    assert "manage.py migrate" in body["workers"]["error"]
