"""Export downloads (what a list's filter shows, streamed) and the staff import page."""

from __future__ import annotations

import io

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.urls import path
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from duels.exchange.export import exchange_dump_line, exchange_lines
from duels.exchange.importer import ExchangeImportError, exchange_import
from duels.exchange.selectors import exchange_for_duels, exchange_for_environments
from duels.exchange.transfer import TransferImportError, transfer_import_csv
from duels.exchange.untrusted import CSV_FILE, untrusted_stream
from duels.forms.annotations import ImportForm, TransferImportForm
from duels.forms.dashboard import DuelFilterForm, EnvironmentFilterForm
from duels.models import Condition
from duels.panels.archives import MANIFEST, TAR, UNKNOWN, ZIP, upload_kind
from duels.publishing.streams import ExportRequest, export_lines
from duels.selectors.annotations import duel_filter_by_annotation, environment_filter_by_annotation
from duels.selectors.duels import duel_list
from duels.selectors.environments import environment_list
from duels.trainers.training import training_environment_records
from duels.views.common import staff_required, streaming_download
from duels.views.limits import search_rate_limited


def _download(request: HttpRequest, lines, name: str) -> StreamingHttpResponse:
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return streaming_download(request, lines, content_type="application/x-ndjson; charset=utf-8",
                              filename=f"envduels-{name}-{stamp}.jsonl")


def _mine(request: HttpRequest):
    return request.user if request.GET.get("mine") in {"1", "on", "yes", "true"} else None


def filtered_environments(request: HttpRequest):
    """The environments the list shows for these query parameters (plus tag/"mine" notes)."""
    form = EnvironmentFilterForm(request.GET or None)
    environments = environment_list(filters=form.filters() if form.is_bound else None)
    return environment_filter_by_annotation(environments, annotated_by=_mine(request))


def filtered_duels(request: HttpRequest):
    """The duels the list shows for these query parameters (plus tag/"mine" notes)."""
    form = DuelFilterForm(request.GET or None)
    duels = duel_list(filters=form.filters() if form.is_bound else None)
    return duel_filter_by_annotation(
        duels, tag=(request.GET.get("tag") or "").strip() or None, annotated_by=_mine(request)
    )


@require_GET
@login_required
@search_rate_limited
def export_duels(request: HttpRequest) -> StreamingHttpResponse:
    """envduels.v1 of the duels the list shows, with everything they refer to."""
    duels = filtered_duels(request).order_by()
    lines = exchange_lines(exchange_for_duels(duels=duels), player_servers=request.user.is_staff)
    return _download(request, lines, "duels")


@require_GET
@login_required
def export_environments(request: HttpRequest) -> StreamingHttpResponse:
    """envduels.v1 of the environments the list shows: designs, hints, notes (no episodes)."""
    environments = filtered_environments(request).order_by()
    return _download(
        request,
        exchange_lines(exchange_for_environments(environments=environments),
                       player_servers=request.user.is_staff),
        "environments",
    )


@require_GET
@login_required
def export_training_environments(request: HttpRequest) -> StreamingHttpResponse:
    """Training data (a): one object per listed environment with hints and pass rates."""
    records = training_environment_records(environments=filtered_environments(request).order_by())
    return _download(request, (exchange_dump_line(r) + "\n" for r in records),
                     "training-environments")


@require_GET
@login_required
def export_training_chat(request: HttpRequest) -> StreamingHttpResponse:
    """Training data (b): solver episodes as chats; ?success=yes|no&condition=hinted|unhinted
    &thinking=yes (keep each reply's reasoning)."""
    success = {"yes": True, "no": False}.get(request.GET.get("success", ""))
    condition = request.GET.get("condition", "")
    export = ExportRequest(
        format="chat", success=success,
        condition=condition if condition in Condition.values else None,
        thinking=request.GET.get("thinking") == "yes",
    )
    return _download(request, export_lines(request=export), "chat")


@require_GET
@login_required
def export_page(request: HttpRequest) -> HttpResponse:
    """What can be downloaded, in which format, with links (the list pages filter them)."""
    return render(request, "duels/exchange/export.html")


@staff_required
@require_http_methods(["GET", "POST"])
def import_page(request: HttpRequest) -> HttpResponse:
    """Upload an envduels.v1 file or a transfer CSV; the same services as the commands. An
    upload that is the original harness's envduels-v1 (its manifest.json or an archive) is
    told apart by its content and pointed to `/panels/import/`."""
    form, transfer_form = ImportForm(), TransferImportForm()
    result, status, original_format = "", 200, ""
    if request.method == "POST" and "file" in request.FILES:
        form = ImportForm(request.POST, request.FILES)
        kind = upload_kind(form.cleaned_data["file"].file) if form.is_valid() else UNKNOWN
        if kind in (MANIFEST, ZIP, TAR):
            # The original harness's format, one character from ours: point to its page.
            form.add_error(None, f"This is {'an' if kind != MANIFEST else 'the'} {kind}, "
                                 "not an envduels.v1 exchange file.")
            original_format = kind
        elif form.is_valid():
            try:
                stream = untrusted_stream(form.cleaned_data["file"].file, what="the file")
                result = exchange_import(stream=stream).summary()
            except ExchangeImportError as exc:
                # Shown in the box of the form that failed, as its field errors are.
                form.add_error(None, f"{exc} — nothing was imported.")
    elif request.method == "POST":
        transfer_form = TransferImportForm(request.POST, request.FILES)
        if transfer_form.is_valid():
            upload = transfer_form.cleaned_data["csv_file"].file
            upload.seek(0)
            try:
                data = upload.read(CSV_FILE.limit + 1)
                if len(data) > CSV_FILE.limit:
                    raise TransferImportError(f"the file is over {CSV_FILE.limit:,} bytes",
                                              line=1)
                text = io.StringIO(data.decode("utf-8-sig"), newline="")
                report = transfer_import_csv(stream=text)
                result = (
                    f"imported {report.created} transfer results; {report.skipped} already present"
                )
            except (TransferImportError, UnicodeDecodeError) as exc:
                transfer_form.add_error(None, f"{exc} — nothing was imported.")
    if form.errors or transfer_form.errors:
        status = 400
    context = {"form": form, "transfer_form": transfer_form, "result": result,
               "original_format": original_format}
    return render(request, "duels/exchange/import.html", context, status=status)


urlpatterns = [
    path("export/duels.jsonl", export_duels, name="export_duels"),
    path("export/environments.jsonl", export_environments, name="export_environments"),
    path("export/training/environments.jsonl", export_training_environments,
         name="export_training_environments"),
    path("export/training/chat.jsonl", export_training_chat, name="export_training_chat"),
    path("export/", export_page, name="export"),
    path("import/", import_page, name="import"),
]
