"""The glossary: every metric the pages show, defined once (duels/words/glossary.py); and the docs/
pages the site links to, as their plain text."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path
from django.views.decorators.http import require_GET

from duels.words.glossary import GLOSSARY


@require_GET
def glossary(request: HttpRequest) -> HttpResponse:
    """Definitions and formulas; metric labels elsewhere link to `/glossary/#<key>`.

    Open to signed-out visitors too: it describes the method, not anyone's data.
    """
    return render(request, "duels/glossary.html", {"terms": GLOSSARY})


DOCS = Path(settings.BASE_DIR) / "docs"


@require_GET
@login_required
def docs_page(request: HttpRequest, name: str) -> HttpResponse:
    """A page of docs/ as its plain Markdown text (pages link to the definitions there), for
    signed-in readers: the docs describe this installation's limits and deployment too, and
    only the landing page and the glossary are open to everyone (docs/security.md)."""
    page = DOCS / f"{name}.md"
    if not page.is_file():
        raise Http404("No such documentation page.")
    return HttpResponse(page.read_text(encoding="utf-8"),
                        content_type="text/plain; charset=utf-8")


urlpatterns = [
    path("glossary/", glossary, name="glossary"),
    path("docs/<slug:name>.md", docs_page, name="docs_page"),
]
