"""A driver whose lease ran out while its setter answered must not replace a side that another
driver already stored (episodes made for that environment would no longer match the duel)."""

from __future__ import annotations

import pytest

from duels.engine.authoring import _side_store_and_validate
from duels.models import Duel, Environment, Hint
from duels.players.answers import SetterAnswer
from tests.factories import TRIVIAL_SOURCE

pytestmark = pytest.mark.django_db


def test_a_late_driver_keeps_the_side_another_driver_stored(make):
    a, b = make.player(), make.player()
    duel = Duel.objects.create(a=a, b=b, attempts=1)
    late_view = Duel.objects.get(pk=duel.pk)  # read before the other driver stored the side
    stored = make.environment(author=a)
    stored_hint = make.hint(environment=stored, author=a)
    Duel.objects.filter(pk=duel.pk).update(env_a=stored, hint_a=stored_hint)
    environments, hints = Environment.objects.count(), Hint.objects.count()

    side = _side_store_and_validate(
        duel=late_view, side="a", environment=None, hint=None,
        answer=SetterAnswer(title="Late", source=TRIVIAL_SOURCE, hint="late hint"))

    duel.refresh_from_db()
    assert (duel.env_a_id, duel.hint_a_id) == (stored.pk, stored_hint.pk)
    assert (side.environment.pk, side.hint.pk, side.forfeit) == (stored.pk, stored_hint.pk, "")
    assert (Environment.objects.count(), Hint.objects.count()) == (environments, hints)
