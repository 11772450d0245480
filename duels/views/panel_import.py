"""`/panels/import/` (staff): the original's files from the browser. An envduels-v1 export as a
zip or tar archive (`archive`) and optionally its result snapshot (`snapshot`); the POST answers
a preview with nothing written, and the confirming POST (`/panels/import/confirm/`) imports.
The work is `duels.panels.web_import`, which runs the command line's imports."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods, require_POST

from duels.panels.errors import PanelError
from duels.panels.web_import import (
    import_confirm,
    import_discard,
    import_preview,
    import_stage,
    panel_upload_name,
)
from duels.views.common import staff_required


class PanelImportForm(forms.Form):
    archive = forms.FileField(
        label="Export (zip or tar)",
        help_text="The envduels-v1 export folder (manifest.json and the files it names) as a "
                  "zip or tar archive.")
    snapshot = forms.FileField(
        required=False, label="Result snapshot (zip or tar, optional)",
        help_text="The original harness's results for this export (a folder with run.json), "
                  "imported as outcomes without transcripts.")
    name = forms.CharField(required=False, max_length=200, label="Panel name",
                           help_text="Empty: the archive's file name.")


@staff_required
@require_http_methods(["GET", "POST"])
def panel_import_page(request: HttpRequest) -> HttpResponse:
    """The upload form; a POST stages the files and answers the preview (nothing written)."""
    form = PanelImportForm(request.POST or None, request.FILES or None)
    if request.method == "GET" or not form.is_valid():
        return render(request, "duels/panels/import.html", {"form": form},
                      status=400 if form.errors else 200)
    archive = form.cleaned_data["archive"]
    token = import_stage(
        archive=archive.file, snapshot=(form.cleaned_data["snapshot"] or None)
        and form.cleaned_data["snapshot"].file,
        name=form.cleaned_data["name"].strip() or panel_upload_name(archive.name),
        user=request.user)
    preview = import_preview(token=token, user=request.user)
    return render(request, "duels/panels/import.html", {"form": form, "preview": preview},
                  status=200 if preview.importable else 400)


@staff_required
@require_POST
def panel_import_confirm(request: HttpRequest) -> HttpResponse:
    """Import what the preview showed; `cancel` discards the staged files instead."""
    token = request.POST.get("token", "")
    if request.POST.get("cancel"):
        import_discard(token=token)
        messages.info(request, "Nothing was imported.")
        return redirect("duels:panel_import")
    try:
        panel, preview = import_confirm(token=token, user=request.user)
    except PanelError as error:
        return render(request, "duels/panels/import.html", {
            "form": PanelImportForm(), "problem": str(error)},
            status=400)
    outcomes = (f"; {preview.snapshot.created} outside outcomes of "
                f"{len(preview.snapshot.models)} models ({preview.snapshot.skipped} already "
                "there)" if preview.snapshot else "")
    verb = "already here as" if preview.existing else "imported as"
    messages.success(request, f"{len(preview.versions)} versions {verb} panel {panel.name}"
                              f"{outcomes}.")
    return redirect(reverse("duels:panel_detail", args=[panel.uuid]))


urlpatterns = [
    path("panels/import/", panel_import_page, name="panel_import"),
    path("panels/import/confirm/", panel_import_confirm, name="panel_import_confirm"),
]
