"""What an author reads before revising a version: the field's digest of its play, and in
observe mode digests of the study's other versions already played.

The digest says how every solver did in each condition, the last actions of unhinted failures
and of hinted successes, and which seeds the hint flipped from a failure to a pass. Plays that
ended without a result (infrastructure faults, cancellations) are left out, as in every figure.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Prefetch

from duels.models import DONE_STATUSES, Environment, EnvironmentStatus, Episode, Step, Study
from duels.players import prompts
from duels.scoring import SideResults, SideScore, episode_decided, episode_passed, side_score

TAILS = 6  # episodes quoted per kind of tail
MAX_DIGESTS = 8  # observe mode: other versions per prompt, newest first


def _decided_plays(version: Environment) -> list[Episode]:
    plays = (Episode.objects.filter(study_id=version.study_id, environment=version,
                                    status__in=DONE_STATUSES)
             .select_related("solver").order_by("solver__name", "seed", "condition"))
    return [play for play in plays
            if episode_decided(status=play.status, end_reason=play.end_reason)]


def _actions(plays: list[Episode]) -> dict[int, list[str]]:
    """Each play's actions in order (format reminders sent nothing and are left out)."""
    steps = (Step.objects.filter(episode_id__in=[play.pk for play in plays], index__gte=1)
             .order_by("episode_id", "index").values_list("episode_id", "action"))
    actions: dict[int, list[str]] = defaultdict(list)
    for episode_id, action in steps:
        if action:
            actions[episode_id].append(action)
    return actions


def _field_score(plays: list[Episode]) -> SideScore:
    """The version against the whole field by the one scoring rule: each (solver, seed) a
    paired attempt, so p_u and p_h are the field's pass rates and flips its flipped pairs."""
    unhinted, hinted = {}, {}
    for play in plays:
        outcome = hinted if play.hinted else unhinted
        outcome[(play.solver.name, play.seed)] = episode_passed(status=play.status,
                                                                success=play.success)
    return side_score(results=SideResults(unhinted=unhinted, hinted=hinted))


def version_field_digest(*, version: Environment) -> str:
    """The field's digest of one played version (duels.players.prompts.field_digest)."""
    plays = _decided_plays(version)
    by_solver: dict[str, list[Episode]] = defaultdict(list)
    results: dict[tuple[str, int], dict[bool, bool]] = defaultdict(dict)
    for play in plays:
        by_solver[play.solver.name].append(play)
        results[(play.solver.name, play.seed)][play.hinted] = episode_passed(
            status=play.status, success=play.success)
    solvers = []
    for name, own in sorted(by_solver.items()):
        score = _field_score(own)
        solvers.append({"solver": name, "unhinted": score.p_unhinted, "hinted": score.p_hinted})
    field = _field_score(plays)
    failures = [play for play in plays if not play.hinted
                and not episode_passed(status=play.status, success=play.success)][:TAILS]
    successes = [play for play in plays if play.hinted
                 and episode_passed(status=play.status, success=play.success)][:TAILS]
    actions = _actions([*failures, *successes])
    flipped = sorted({seed for (_, seed), result in results.items()
                      if result.get(False) is False and result.get(True) is True})
    hint = version.hints.order_by("level", "pk").first()
    return prompts.field_digest(
        version=version.version, title=version.title, domain=version.domain,
        hint=hint.text if hint else "", seeds=version.benchmark_seeds or [],
        p_unhinted=field.p_unhinted, p_hinted=field.p_hinted, solvers=solvers,
        unhinted_failures=[(p.solver.name, p.seed, actions.get(p.pk, [])) for p in failures],
        hinted_successes=[(p.solver.name, p.seed, actions.get(p.pk, [])) for p in successes],
        flipped=flipped,
    )


def study_observe_digests(*, study: Study, author_id: int, slot: str) -> list[str]:
    """Observe mode: digests of the study's versions whose field play ended, other than the
    slot's own lineage, newest first (at most MAX_DIGESTS)."""
    if not study.observe:
        return []
    open_versions = set(Episode.objects.filter(study=study).exclude(
        status__in=DONE_STATUSES).values_list("environment_id", flat=True))
    played = (Environment.objects.filter(study=study, status=EnvironmentStatus.VALID)
              .exclude(author_id=author_id, slot=slot).exclude(pk__in=open_versions)
              .filter(episodes__isnull=False).distinct().select_related("author")
              .prefetch_related(Prefetch("hints")).order_by("-created_at", "-pk"))
    digests = []
    for version in played[:MAX_DIGESTS]:
        plays = _decided_plays(version)
        field = _field_score(plays)
        failed = [p for p in plays if not p.hinted
                  and not episode_passed(status=p.status, success=p.success)][:TAILS]
        actions = _actions(failed)
        hints = list(version.hints.all())
        digests.append(prompts.observe_digest(
            title=version.title, author=version.author.name if version.author else "a person",
            hint=hints[0].text if hints else "", p_unhinted=field.p_unhinted,
            p_hinted=field.p_hinted, setter_score=field.setter_score,
            failed_unhinted_actions=[actions.get(p.pk, []) for p in failed],
        ))
    return digests
