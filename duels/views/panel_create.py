"""`/panels/new/` (operators): make a panel in the browser, from a study's final versions or from
a selection of designs, with the very functions `manage.py panel create` calls."""

from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path, reverse
from django.views.decorators.http import require_http_methods

from duels.panels.create import MIN_DESIGN_PREFIX, panel_from_designs, panel_from_study
from duels.panels.errors import PanelError
from duels.services.access import EVALUATION_START_DENIED, evaluation_can_start
from duels.studies.selectors import study_list

MAX_DESIGNS = 2000  # as many versions as an imported export may hold


class StudyField(forms.ModelChoiceField):
    def label_from_instance(self, obj) -> str:
        return f"{obj.name} ({obj.get_status_display()})"


class PanelCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    study = StudyField(queryset=study_list(), to_field_name="uuid", required=False,
                       empty_label="—", help_text="Its slots' final versions (the last valid "
                                                  "revision of each).")
    designs = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text=f"Or design hashes (each at least {MIN_DESIGN_PREFIX} characters), separated "
                  "by commas, spaces or lines: each design's latest valid environment.")

    def clean(self) -> dict:
        data = super().clean()
        hashes = [part for part in re.split(r"[\s,]+", data.get("designs") or "") if part]
        if len(hashes) > MAX_DESIGNS:
            raise forms.ValidationError(f"At most {MAX_DESIGNS} designs make one panel.")
        data["hashes"] = hashes
        if bool(data.get("study")) == bool(hashes):
            raise forms.ValidationError("Choose a study or name designs (one of the two).")
        return data


@require_http_methods(["GET", "POST"])
@login_required
def panel_new(request: HttpRequest) -> HttpResponse:
    """The form; a valid POST makes the panel (or finds the same one) and opens it."""
    if not evaluation_can_start(user=request.user):
        raise PermissionDenied(EVALUATION_START_DENIED.replace("evaluate players on panels",
                                                               "make panels"))
    initial = {"study": request.GET.get("study"), "designs": request.GET.get("designs", "")}
    form = PanelCreateForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            if data["study"]:
                panel, created = panel_from_study(study=data["study"], name=data["name"],
                                                  user=request.user)
            else:
                panel, created = panel_from_designs(hashes=data["hashes"], name=data["name"],
                                                    user=request.user)
        except PanelError as error:
            form.add_error(None, str(error))
        else:
            messages.success(request, (f"Panel {panel.name} made: " if created else
                                       f"The same versions, seeds and hints are panel "
                                       f"{panel.name} already: ")
                             + f"{panel.entries.count()} versions.")
            return redirect(reverse("duels:panel_detail", args=[panel.uuid]))
    return render(request, "duels/panels/new.html", {"form": form},
                  status=400 if form.errors else 200)


urlpatterns = [path("panels/new/", panel_new, name="panel_new")]
