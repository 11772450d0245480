"""Reads about designs: environments that share one source (their content hash) are one design.

A design has no row of its own. Its key is `Environment.content_hash` (the SHA-256 of the source
with line endings and trailing whitespace normalised, the same in every installation) and its
address is its *first copy*, the first environment row stored with that hash (lowest key):
lists, notes, charts and the joint model's items speak of the first copy's uuid and title.
Every duel and episode keeps pointing at the copy it played.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Min, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from duels.analytics.designs import design_label
from duels.models import Duel, Environment, Player

__all__ = [
    "Design", "design_authors", "design_copies", "design_duels", "design_environment_ids",
    "design_first_copy_ids", "design_get", "design_label", "design_list",
]


def design_first_copy_ids() -> QuerySet:
    """The primary key of each design's first copy (a subquery)."""
    return (
        Environment.objects.order_by().values("content_hash").annotate(first=Min("pk"))
        .values("first")
    )


def _copies_of(content_hash: str | OuterRef) -> QuerySet[Environment]:
    return Environment.objects.filter(content_hash=content_hash).order_by()


def design_list() -> QuerySet[Environment]:
    """One environment per design (its first copy), with `copies` (rows sharing the source) and
    `author_count` (distinct authors among them) annotated, newest first."""
    return (
        Environment.objects.filter(pk__in=design_first_copy_ids())
        .select_related("author")
        .annotate(
            copies=Coalesce(Subquery(
                _copies_of(OuterRef("content_hash")).values("content_hash")
                .annotate(n=Count("pk")).values("n")), 0),
            author_count=Coalesce(Subquery(
                _copies_of(OuterRef("content_hash")).values("content_hash")
                .annotate(n=Count("author", distinct=True)).values("n")), 0),
        )
        .order_by("-created_at", "-pk")
    )


def design_copies(*, content_hash: str) -> QuerySet[Environment]:
    """Every environment row of one design, first copy first, with authors."""
    return _copies_of(content_hash).select_related("author").order_by("pk")


def design_environment_ids(*, content_hash: str) -> QuerySet:
    """Primary keys of one design's copies (a subquery for episode and duel reads)."""
    return _copies_of(content_hash).values("pk")


def design_authors(*, content_hashes: Iterable[str]) -> dict[str, list[Player]]:
    """Each design's distinct authors in the order they first wrote it (one query)."""
    authors: dict[str, list[Player]] = defaultdict(list)
    copies = (
        Environment.objects.filter(content_hash__in=set(content_hashes), author__isnull=False)
        .select_related("author").order_by("pk")
    )
    for copy in copies:
        if all(author.pk != copy.author_id for author in authors[copy.content_hash]):
            authors[copy.content_hash].append(copy.author)
    return dict(authors)


def design_duels(*, content_hash: str) -> QuerySet[Duel]:
    """Every duel in which a copy of the design was played or written, newest first."""
    copies = design_environment_ids(content_hash=content_hash)
    return (
        Duel.objects.filter(Q(env_a__in=copies) | Q(env_b__in=copies))
        .select_related("a", "b", "env_a", "env_b", "tournament")
        .order_by("-created_at", "-pk")
    )


@dataclass(frozen=True)
class Design:
    """One design: its first copy (title, address, estimate), every copy and its authors."""

    content_hash: str
    first: Environment
    copies: tuple[Environment, ...]
    authors: tuple[Player, ...]

    @property
    def short_hash(self) -> str:
        return self.content_hash[:6]

    @property
    def convergent(self) -> bool:
        """The same code from two or more authors: a sign that designs converge."""
        return len(self.authors) > 1


def design_get(*, environment: Environment) -> Design:
    """The design `environment` belongs to (two queries)."""
    copies = tuple(design_copies(content_hash=environment.content_hash).select_related(
        "estimate"))
    authors: list[Player] = []
    for copy in copies:
        if copy.author_id and all(author.pk != copy.author_id for author in authors):
            authors.append(copy.author)
    return Design(content_hash=environment.content_hash, first=copies[0] if copies else environment,
                  copies=copies, authors=tuple(authors))

