"""Finding text in transcripts, always through the database's full-text index: words across
every episode, words within one episode, and the duel list's filter.

A query is its words, all of which must occur in one step's reply, action, observation or
thinking (whole words, any case, no stemming: the same on PostgreSQL and SQLite). No filter
scans transcript text (`LIKE '%…%'` reads every step, and a near-matching text makes it
quadratic), so a query costs what its words' index entries cost. Matches come newest first, a
page at a time, with a cursor (`before`) instead of a count, so a common word costs no more
than a rare one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Max, Min, Q
from django.db.models.expressions import RawSQL

from duels.models import Episode, Step
from duels.selectors.episode_list import EpisodeFilters, episode_filters_q
from duels.selectors.search_columns import FTS_TABLE, PG_DOCUMENT

MAX_QUERY_CHARS = 200
MAX_WORDS = 12
PAGE_SIZE = 50
# A search narrowed by episode facets looks at this many of the newest matching steps per page
# (docs/security.md): a rare facet on a common word answers "more may match further back"
# instead of reading the whole index.
FACETED_SCAN = 5000
SNIPPET_CHARS = 160
# One episode's matches listed for the replay's "n of m" (a 5,000-step episode fits whole).
MAX_EPISODE_MATCHES = 10_000

_WORD = re.compile(r"\w+", re.UNICODE)


class SearchQueryError(ValueError):
    """A query the search cannot run, with a message saying what to type instead."""


def search_words(query: str) -> list[str]:
    """The words of a query, lower-cased; raise SearchQueryError when there are none."""
    if len(query) > MAX_QUERY_CHARS:
        raise SearchQueryError(f"Search for at most {MAX_QUERY_CHARS} characters.")
    words = [word.lower() for word in _WORD.findall(query)]
    if not words:
        raise SearchQueryError("Type at least one word (letters or digits) to search for.")
    return list(dict.fromkeys(words))[:MAX_WORDS]


def _matching_steps_sql(words: list[str], *, before: int | None,
                        limit: int) -> tuple[str, list]:
    """SQL selecting the ids of the newest `limit` steps holding every word (older than
    `before`), newest first: one index lookup."""
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT id FROM duels_step WHERE {PG_DOCUMENT} "
            "@@ plainto_tsquery('simple', %s)"
        )
        params: list = [" ".join(words)]
        column = "id"
    else:
        # Each word quoted (a quote inside doubled), so no input is read as FTS5 syntax.
        match = " ".join('"{}"'.format(word.replace('"', '""')) for word in words)
        sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
        params = [match]
        column = "rowid"
    if before is not None:
        sql += f" AND {column} < %s"
        params.append(before)
    return sql + f" ORDER BY {column} DESC LIMIT %s", [*params, limit]


def _matching_step_ids(words: list[str], *, before: int | None, limit: int) -> list[int]:
    sql, params = _matching_steps_sql(words, before=before, limit=limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class SearchHit:
    step: Step
    field: str
    before: str
    match: str
    after: str


@dataclass(frozen=True)
class SearchPage:
    query: str
    hits: list[SearchHit]
    next_before: int | None
    # The facets' bounded scan ended before the page filled: older steps may still match.
    capped: bool = False


def _snippet(step: Step, words: list[str]) -> SearchHit:
    """The first searched field holding one of the words, cut around it."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(word) for word in words) + r")\b", re.I)
    for field in ("action", "observation", "reply", "thinking"):
        text = getattr(step, field)
        found = pattern.search(text)
        if found:
            start = max(found.start() - SNIPPET_CHARS // 2, 0)
            end = min(found.end() + SNIPPET_CHARS // 2, len(text))
            return SearchHit(
                step=step, field=field,
                before=("…" if start else "") + text[start:found.start()],
                match=found.group(0),
                after=text[found.end():end] + ("…" if end < len(text) else ""),
            )
    return SearchHit(step=step, field="observation", before=step.observation[:SNIPPET_CHARS],
                     match="", after="")


def _faceted_step_ids(words: list[str], *, filters: EpisodeFilters, before: int | None,
                      limit: int) -> tuple[list[int], int | None, bool]:
    """The newest matching steps whose episodes pass the facets: among the newest
    FACETED_SCAN matches only (one query), so a common word and a rare facet cost a bounded
    scan, never the whole index; the cursor then continues below the matches looked at."""
    sql, params = _matching_steps_sql(words, before=before, limit=FACETED_SCAN)
    looked_at = Step.objects.filter(id__in=RawSQL(sql, params))
    found = list(looked_at.filter(episode_filters_q(filters, prefix="episode__"))
                 .order_by("-id").values_list("id", flat=True)[: limit + 1])
    if len(found) > limit:
        return found[:limit], found[limit - 1], False
    scan = looked_at.aggregate(oldest=Min("id"), count=Count("id"))
    if scan["count"] >= FACETED_SCAN:  # the bound was reached: more may match further back
        return found, scan["oldest"], True
    return found, None, False


def transcripts_search(*, query: str, before: int | None = None, limit: int = PAGE_SIZE,
                       filters: EpisodeFilters | None = None) -> SearchPage:
    """Steps of any episode holding every word of `query`, newest first, one page; with
    `filters`, only steps of the episodes they select (the episode list's facets)."""
    words = search_words(query)
    capped = False
    if filters is not None and filters.any:
        ids, next_before, capped = _faceted_step_ids(words, filters=filters, before=before,
                                                     limit=limit)
    else:
        ids = _matching_step_ids(words, before=before, limit=limit + 1)
        more = len(ids) > limit
        ids = ids[:limit]
        next_before = ids[-1] if more and ids else None
    steps = Step.objects.filter(id__in=ids).select_related(
        "episode__solver", "episode__environment__author", "episode__duel__a",
        "episode__duel__b", "episode__duel__tournament", "episode__study",
        "episode__evaluation__panel"
    )
    by_id = {step.id: step for step in steps}
    hits = [_snippet(by_id[step_id], words) for step_id in ids if step_id in by_id]
    return SearchPage(query=query, hits=hits, next_before=next_before, capped=capped)


def step_words_q(words: list[str], *, id_range: tuple[int, int] | None = None,
                 prefix_last: bool = False) -> Q:
    """Steps holding every word, as a filter on `Step` (an index lookup, never a scan);
    `id_range` bounds the lookup to the step ids of one episode; with `prefix_last` the last
    word matches the start of a word (find as you type: "nort" finds "north")."""
    if connection.vendor == "postgresql":
        whole, last = (words[:-1], words[-1]) if prefix_last else (words, "")
        conditions, params = [], []
        if whole:
            conditions.append(f"{PG_DOCUMENT} @@ plainto_tsquery('simple', %s)")
            params.append(" ".join(whole))
        if last:
            # A word is letters, digits and underscores (search_words), so quoting it as one
            # lexeme leaves nothing for to_tsquery to read as syntax.
            conditions.append(f"{PG_DOCUMENT} @@ to_tsquery('simple', %s)")
            params.append("'" + last.replace("'", "''") + "':*")
        sql = "SELECT id FROM duels_step WHERE " + " AND ".join(conditions)
        column = "id"
    else:
        quoted = ['"{}"'.format(word.replace('"', '""')) for word in words]
        if prefix_last:
            quoted[-1] += "*"
        sql = f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
        params = [" ".join(quoted)]
        column = "rowid"
    if id_range is not None and connection.vendor == "postgresql":
        # Materialized, so the planner cannot trade the word index for a walk of the id range
        # that runs to_tsvector over every step of the episode (seconds on long observations).
        sql = (f"WITH matched AS MATERIALIZED ({sql}) "
               "SELECT id FROM matched WHERE id BETWEEN %s AND %s")
        params += list(id_range)
    elif id_range is not None:
        sql += f" AND {column} BETWEEN %s AND %s"
        params += list(id_range)
    return Q(id__in=RawSQL(sql, params))


def episode_search(*, episode: Episode, query: str) -> list[int]:
    """Indices of the episode's steps holding every word of `query` (any case; the last one
    may be the start of a word, as a person types it), in order."""
    words = search_words(query.strip())
    steps = Step.objects.filter(episode=episode)
    bounds = steps.aggregate(low=Min("id"), high=Max("id"))
    if bounds["low"] is None:
        return []
    return list(
        steps.filter(step_words_q(words, id_range=(bounds["low"], bounds["high"]),
                                  prefix_last=True))
        .order_by("index")
        .values_list("index", flat=True)[:MAX_EPISODE_MATCHES]
    )
