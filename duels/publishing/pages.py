"""Render the site's own pages for a static copy, and turn them into files that work anywhere.

A page is rendered by the site's view (same templates, same escaping), then cleaned for a static
host: the links it holds become relative paths to the files written beside it (a link to a page
that is not in the copy keeps its text and loses its address), static files are named relative
to the page, and what needs a server goes (forms, htmx attributes, polling).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, unquote, urlsplit

from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse
from django.test import RequestFactory
from django_htmx.middleware import HtmxDetails

_UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_ADDRESS = re.compile(r'(?P<attr>href|src)="(?P<url>[/?][^"]*)"')
# Forms post to the server and go; one marked data-site-keep works in the page (the replay's
# find box, answered from the steps the page holds).
_FORM = re.compile(r"<form\b(?![^>]*\bdata-site-keep\b).*?</form>", re.DOTALL)
_HTMX_ATTR = re.compile(r"\s(?:hx-[a-z-]+|data-panel-url)=(?:'[^']*'|\"[^\"]*\")")
_SERVER_SCRIPT = re.compile(
    r'<script\b[^>]*src="/static/(?:django_htmx/[^"]+|js/(?:htmx-errors|live_focus|live_reply|'
    r'replay|charts|study_live)\.js)"[^>]*></script>')
_DOWNLOAD_LINK = re.compile(r'\s*(?:·\s*)?<a\b[^>]*\bdownload\b[^>]*>.*?</a>', re.DOTALL)
_THINKING = re.compile(r'<details class="step-thinking"[^>]*>.*?</details>', re.DOTALL)
_GUTTER_NOTES = re.compile(r'<td class="gutter-notes">.*?</td>', re.DOTALL)
_SETTER_CALLS = re.compile(r'<section class="card" id="setter-calls".*?</section>', re.DOTALL)
_NOTES_PLACEHOLDER = re.compile(r'<div id="annotations" hx-get=.*?</div>', re.DOTALL)
_LISTS = {"/duels/": "site-duels", "/environments/": "site-environments",
          "/tournaments/": "site-tournaments", "/studies/": "site-studies",
          "/analytics/": "analytics-findings"}
# A button whose page is not in the copy goes; a plain link keeps its words.
_UNLINKED_BUTTON = re.compile(
    r'<a\b[^>]*\bclass="button[^"]*"[^>]*\bdata-site-unlinked[^>]*>.*?</a>', re.DOTALL)
# Links never nest, so an anchor ends at the first </a> after it.
_UNLINKED = re.compile(r"<a(?P<before>[^>]*) data-site-unlinked(?P<after>[^>]*)>(?P<text>.*?)</a>",
                       re.DOTALL)


@dataclass
class SiteMap:
    """Which site addresses have a file in the copy, and where (paths relative to its root)."""

    duels: set[str] = field(default_factory=set)
    environments: set[str] = field(default_factory=set)
    episodes: set[str] = field(default_factory=set)
    tournaments: set[str] = field(default_factory=set)
    studies: set[str] = field(default_factory=set)
    # Each compared pair's file, by (unhinted uuid, hinted uuid), and each episode's pair.
    pairs: dict[tuple[str, str], str] = field(default_factory=dict)
    pair_of: dict[str, str] = field(default_factory=dict)
    static: dict[str, str] = field(default_factory=dict)  # static name -> its source file
    # Each study slot's story page by its site path (`/studies/<uuid>/slots/<author>/<slot>/`).
    stories: dict[str, str] = field(default_factory=dict)

    def target(self, url: str) -> str | None:
        """The copy's file for a site address (with its #fragment), or None when not copied."""
        if url.startswith("?"):
            return None  # another page or filter of the same view: not in the copy
        parts = urlsplit(url.replace("&amp;", "&"))
        path, fragment = unquote(parts.path), f"#{parts.fragment}" if parts.fragment else ""
        if parts.query and path not in {"/compare/"}:
            return None  # a filtered or paged view of a page: only the page itself is copied
        if path == "/":
            return "index.html" + fragment
        if path == "/glossary/":
            return "glossary.html" + fragment
        if path in _LISTS:  # the site's lists: the index lists the copy's duels and environments
            return f"index.html#{_LISTS[path]}"
        if path.startswith("/static/"):
            return "static/" + path.removeprefix("/static/")
        if path in self.stories:
            return self.stories[path] + fragment
        if path == "/compare/":
            query = parse_qs(parts.query)
            pair = (query.get("a", [""])[0], query.get("b", [""])[0])
            return (self.pairs[pair] + fragment) if pair in self.pairs else None
        match = re.fullmatch(rf"/(duels|environments|episodes|tournaments|studies)/({_UUID})/",
                             path)
        if match and match.group(2) in getattr(self, match.group(1)):
            return f"{match.group(1)}/{match.group(2)}.html{fragment}"
        match = re.fullmatch(rf"/episodes/({_UUID})/compare/", path)
        if match and match.group(1) in self.pair_of:
            return self.pair_of[match.group(1)] + fragment
        return None


@dataclass(frozen=True)
class Leave:
    """What a published copy leaves out."""

    notes: bool = False
    costs: bool = False
    reasoning: bool = False


def site_request(path: str, query: dict[str, str] | None = None, *,
                 extra: dict | None = None, partial: bool = False) -> HttpRequest:
    """A GET request for the site's views as a signed-in reader who may change nothing.

    The user is never saved: it only gets past `login_required`, so the pages show what any
    signed-in reader sees (no staff links, no owner's buttons).
    """
    headers = {"HX-Request": "true"} if partial else {}  # the view answers with its partial
    request = RequestFactory().get(path, query or {}, headers=headers)
    # An id no account has: "is this the owner?" is false for every object, even unowned ones.
    reader = get_user_model()(id=-1, username="published-site", is_staff=False,
                              is_superuser=False)
    request.user = reader
    request.htmx = HtmxDetails(request)
    request.static_site = True
    request.session = {}
    for name, value in (extra or {}).items():  # what the copy's navigation shows
        setattr(request, name, value)
    return request


def page_render(view: Callable[..., HttpResponse], path: str, *, query: dict | None = None,
                extra: dict | None = None, partial: bool = False, **kwargs) -> str:
    """The view's HTML for `path`, as the site would serve it to a signed-in reader."""
    response = view(site_request(path, query, extra=extra, partial=partial), **kwargs)
    if response.status_code != 200:
        raise ValueError(f"{path} answered {response.status_code}")
    return response.content.decode("utf-8")


def without_setter_calls(html: str) -> str:
    """The duel page without its setter calls (whole prompts and raw replies, reasoning and
    all): what a copy that leaves out reasoning drops from a duel."""
    return _SETTER_CALLS.sub("", html)


def with_notes_panel(html: str, *, environment, notes: bool, extra: dict) -> str:
    """The environment page with its notes panel in place of the placeholder the site fills
    after loading (or with neither, when the copy leaves notes out)."""
    from duels.views.annotations import environment_annotations

    panel = ""
    if notes:
        panel = page_render(environment_annotations, f"/environments/{environment.uuid}/notes/",
                            extra=extra, partial=True, environment_uuid=environment.uuid)
    return _NOTES_PLACEHOLDER.sub(lambda _: panel, html, count=1)


def page_clean(html: str, *, depth: int, site: SiteMap, leave: Leave) -> str:
    """The page made static: relative links to copied files, nothing that needs a server."""
    html = _FORM.sub("", html)
    html = _SERVER_SCRIPT.sub("", html)
    html = _DOWNLOAD_LINK.sub("", html)
    html = _HTMX_ATTR.sub("", html)
    if leave.reasoning:
        html = _THINKING.sub("", html)
    if leave.costs:  # the replay timeline offers no cost to draw or sum
        html = html.replace('<option value="cost">cost</option>', "")
    if leave.notes:
        html = _GUTTER_NOTES.sub('<td class="gutter-notes"></td>', html)
    prefix = "../" * depth

    def relative(match: re.Match) -> str:
        target = site.target(match.group("url"))
        if target is None:
            return "data-site-unlinked"
        if target.startswith("static/"):
            site.static[target.removeprefix("static/").split("?")[0]] = ""
        return f'{match.group("attr")}="{prefix}{target}"'

    html = _ADDRESS.sub(relative, html)
    # A link to a page that is not in the copy keeps its words and loses its address.
    html = _UNLINKED_BUTTON.sub("", html)
    return _UNLINKED.sub(
        lambda m: f'<span{m.group("before")}{m.group("after")}>{m.group("text")}</span>', html)
