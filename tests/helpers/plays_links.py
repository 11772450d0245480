"""Walk every link from a page to the episode list and check it lists exactly the plays its
`data-plays` attribute announces (every page of the list, following "Older episodes")."""

from __future__ import annotations

import html
import re

LINK = re.compile(r"<a\b[^>]*>", re.IGNORECASE)
HREF = re.compile(r'\bhref="([^"]*)"')
PLAYS = re.compile(r'\bdata-plays="(\d+)"')
ROW = re.compile(r'data-episode="([0-9a-f-]{36})"')
OLDER = re.compile(r'<a href="(\?[^"]*before=\d+)"')


def episode_links(page: str) -> list[tuple[str, int | None]]:
    """Every (href, data-plays) of a link to /episodes/ with a query on the page."""
    links = []
    for tag in LINK.findall(page):
        href = HREF.search(tag)
        if href is None:
            continue
        url = html.unescape(href.group(1))
        if not url.startswith("/episodes/?"):
            continue
        plays = PLAYS.search(tag)
        links.append((url, int(plays.group(1)) if plays else None))
    return links


def listed_plays(client, url: str) -> list[str]:
    """The episodes the list shows at `url`, over all its pages."""
    found: list[str] = []
    while True:
        response = client.get(url)
        assert response.status_code == 200, (url, response.content[:400])
        text = response.content.decode()
        found.extend(ROW.findall(text))
        older = OLDER.search(text)
        if older is None:
            return found
        url = "/episodes/" + html.unescape(older.group(1))


def assert_links_open_their_plays(client, page: str) -> int:
    """Every link to the episode list carries data-plays and lists exactly that many plays
    (each once); returns how many links were walked."""
    links = episode_links(page)
    for url, plays in links:
        assert plays is not None, f"a link to the episode list without data-plays: {url}"
        shown = listed_plays(client, url)
        assert len(shown) == len(set(shown)) == plays, (url, len(shown), plays)
    return len(links)
