"""The glossary: every metric the pages show, defined once (duels/glossary.py)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.glossary import GLOSSARY


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """Definitions and formulas; metric labels elsewhere link to `/glossary/#<key>`.

    Open to signed-out visitors too: it describes the method, not anyone's data.
    """
    return render(request, "duels/glossary.html", {"terms": GLOSSARY})


urlpatterns = [path("glossary/", glossary, name="glossary")]
