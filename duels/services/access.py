"""Who may do what to duels and tournaments: one helper per object kind and action.

Every page, API view and template asks these helpers, so the rule lives in one place:
a duel may be started by operators (staff, or the operators group) and cancelled by the person
who started it or by staff; a tournament is cancelled by staff only
(tournaments are started from the command line by whoever runs the installation); a study is
started by operators (on its page or the command line) and cancelled by its starter or staff.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from duels.models import Duel, Evaluation, Study, Tournament

DUEL_CANCEL_DENIED = "Only the person who started this duel, or staff, may cancel it."
TOURNAMENT_CANCEL_DENIED = "Only staff may cancel a tournament."


def _started_by_or_staff(run: Duel | Study | Evaluation,
                         user: AbstractBaseUser | AnonymousUser) -> bool:
    if not user.is_authenticated:
        return False
    return bool(user.is_staff or (run.created_by_id is not None and run.created_by_id == user.pk))


def duel_can_cancel(*, duel: Duel, user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` started `duel` or is staff."""
    return _started_by_or_staff(duel, user)


def tournament_can_cancel(
    *, tournament: Tournament, user: AbstractBaseUser | AnonymousUser
) -> bool:
    """True when `user` is staff."""
    return bool(user.is_authenticated and user.is_staff)


TOURNAMENT_PUBLISH_DENIED = "Only staff may publish a tournament as a static site."
STUDY_PUBLISH_DENIED = "Only staff may publish a study as a static site."


def study_can_publish(*, study: Study, user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` is staff (a published copy shows every play and figure)."""
    return bool(user.is_authenticated and user.is_staff)


def tournament_can_publish(
    *, tournament: Tournament, user: AbstractBaseUser | AnonymousUser
) -> bool:
    """True when `user` is staff (a published copy shows every duel, note and cost)."""
    return bool(user.is_authenticated and user.is_staff)


# The operator role: who may start duels. Staff always may; other accounts when they are in this
# group. Everyone signed in reads and annotates (the annotator role).
OPERATORS_GROUP = "operators"
DUEL_START_DENIED = (
    "Only operators start duels. Ask staff to add you: "
    "manage.py operators add YOUR_USERNAME (or the operators group in /admin/)."
)


def duel_can_start(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` is staff or in the operators group."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_staff:
        return True
    # Asked by the nav and again by the page's own links: one query per request's user.
    cached = getattr(user, "_envduels_may_start_duels", None)
    if cached is None:
        cached = user.groups.filter(name=OPERATORS_GROUP).exists()
        user._envduels_may_start_duels = cached
    return cached


PLAYER_SIZE_DENIED = ("Only operators and staff set a player's size. Ask staff to add you: "
                      "manage.py operators add YOUR_USERNAME.")


def player_can_set_size(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Operators and staff may enter a player's size (it feeds a finding, not a score)."""
    return duel_can_start(user=user)


STUDY_START_DENIED = (
    "Only operators start studies. Ask staff to add you: "
    "manage.py operators add YOUR_USERNAME (or the operators group in /admin/)."
)
STUDY_CANCEL_DENIED = "Only the person who started this study, or staff, may cancel it."


def study_can_start(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Operators start studies, as they start duels."""
    return duel_can_start(user=user)


def study_can_cancel(*, study: Study, user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` started `study` or is staff."""
    return _started_by_or_staff(study, user)


EVALUATION_START_DENIED = (
    "Only operators evaluate players on panels. Ask staff to add you: "
    "manage.py operators add YOUR_USERNAME (or the operators group in /admin/)."
)
EVALUATION_CANCEL_DENIED = "Only the person who started this evaluation, or staff, may cancel it."


def evaluation_can_start(*, user: AbstractBaseUser | AnonymousUser) -> bool:
    """Operators evaluate players on panels, as they start duels and studies."""
    return duel_can_start(user=user)


def evaluation_can_cancel(*, evaluation: Evaluation,
                          user: AbstractBaseUser | AnonymousUser) -> bool:
    """True when `user` started `evaluation` or is staff."""
    return _started_by_or_staff(evaluation, user)
