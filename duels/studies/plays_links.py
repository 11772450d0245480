"""Links from a study's numbers to the plays behind them: the episode list (`/episodes/`)
filtered to exactly the plays an aggregate counts, with how many there are.

Every figure of a study counts decided plays only (passed or not passed; see
duels.scoring.episode_decided) of the study's own field, so every link carries `study` and
`outcome=decided`; the rest names the version, solver, setter, condition, … of the number.
Templates show a link with `data-plays` set to `plays`, which a test checks against the list.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.urls import reverse


@dataclass(frozen=True)
class PlaysLink:
    url: str
    plays: int  # the plays behind the number: the filtered list holds exactly these


def plays_link(*, study_uuid, plays: int, **filters) -> PlaysLink:
    """The episode list filtered to the study's decided plays narrowed by `filters`
    (the list's own parameter names: version, solver, setter, condition, final, peers, …);
    a true flag is sent as 1, an empty value is left out."""
    query = {"study": str(study_uuid), "outcome": "decided"}
    for name, value in filters.items():
        if value is True:
            query[name] = "1"
        elif value not in (None, "", False):
            query[name] = str(value)
    return PlaysLink(url=f"{reverse('duels:episode_list')}?{urlencode(query)}", plays=int(plays))


def matrix_links(*, study_uuid, rows: list[dict], uuids: dict[str, object]) -> None:
    """Give each author × solver cell one link per condition: the final versions of the row's
    author played by the column's solver in that condition (`cell["links"][condition]`)."""
    for row in rows:
        for cell in row["cells"]:
            cell["links"] = {
                condition: plays_link(
                    study_uuid=study_uuid, plays=cell[condition]["played"], final=True,
                    setter=uuids.get(row["author"]), solver=uuids.get(cell["solver"]),
                    condition=condition)
                for condition in ("unhinted", "hinted")
                if cell[condition]["played"] and row["author"] in uuids
                and cell["solver"] in uuids}


def version_links(*, study_uuid, version_uuid, row: dict | None) -> dict[str, PlaysLink]:
    """A version row's links: its peers' plays per condition (self plays apart), as the
    version's pass rates count them."""
    if not row:
        return {}
    links = {}
    for condition, counts in (("unhinted", row.get("without_hint")),
                              ("hinted", row.get("with_hint"))):
        if counts and counts.get("attempted"):
            links[condition] = plays_link(study_uuid=study_uuid, plays=counts["attempted"],
                                          version=version_uuid, peers=True,
                                          condition=condition)
    if row.get("flips"):  # each flipped (solver, seed) is two plays
        links["flipped"] = plays_link(study_uuid=study_uuid, plays=2 * row["flips"],
                                      version=version_uuid, peers=True, flipped=True)
    return links


def pair_links(*, study_uuid, version_uuid, solver_uuid, row: dict) -> dict[str, PlaysLink]:
    """One solver's plays of one version per condition (a pairs row of the figures)."""
    links = {}
    for condition, counts in (("unhinted", row.get("without_hint")),
                              ("hinted", row.get("with_hint"))):
        if counts and counts.get("attempted") and solver_uuid:
            links[condition] = plays_link(study_uuid=study_uuid, plays=counts["attempted"],
                                          version=version_uuid, solver=solver_uuid,
                                          condition=condition)
    return links
