"""Forms of the dashboard: list filters (GET) and the ad-hoc duel trigger (POST)."""

from __future__ import annotations

from django import forms

from duels.models import EnvironmentStatus, Outcome, Player, Status
from duels.selectors.duels import PLAYER_OUTCOMES, DuelFilters
from duels.selectors.environments import ENVIRONMENT_SORTS, EnvironmentFilters
from duels.selectors.players import player_callable


class PlayerChoiceField(forms.ModelChoiceField):
    """Players chosen by UUID (never by database id) and shown with their built-in label."""

    def label_from_instance(self, obj: Player) -> str:
        return obj.label


def imported_refusal(player: Player) -> str:
    return (f"{player.name} was imported from a file and is not called until a staff user has "
            "set its API-key variable in the admin.")


class CallablePlayerField(PlayerChoiceField):
    """Offers only players that can be called here (player_callable); a posted player imported
    from a file and not configured yet (a page older than the import, a hand-made request) is
    refused naming it and the fix, not as an unknown choice."""

    def __init__(self, **kwargs) -> None:
        super().__init__(queryset=player_callable(), to_field_name="uuid", **kwargs)

    def to_python(self, value):
        try:
            return super().to_python(value)
        except forms.ValidationError:
            waiting = Player.objects.filter(imported=True, builtin=False)
            try:
                player = waiting.filter(uuid=value).first()
            except (ValueError, TypeError, forms.ValidationError):
                player = None
            if player is not None:
                raise forms.ValidationError(imported_refusal(player),
                                            code="invalid_choice") from None
            raise


def blank_choices(choices) -> list[tuple[str, str]]:
    return [("", "any"), *choices]


def filter_form_problems(form: forms.Form) -> list[str]:
    """What is wrong with a bound filter form's query, naming the allowed values where a field
    has a fixed list (the same rule the read API applies: a bad filter is a 400, not ignored)."""
    if not form.is_bound or form.is_valid():
        return []
    problems = list(form.non_field_errors())
    for name, errors in form.errors.items():
        if name == forms.forms.NON_FIELD_ERRORS:
            continue
        field = form.fields.get(name)
        given = str(form.data.get(name, ""))[:40]
        choices = getattr(field, "choices", None)
        if isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField):
            allowed = ", ".join(str(value) for value, _ in choices if value != "")
            problems.append(f"{name} must be one of: {allowed} (got {given!r})")
        else:
            problems.append(f"{name}: {' '.join(errors)} (got {given!r})")
    return problems


class DuelFilterForm(forms.Form):
    player = PlayerChoiceField(
        queryset=Player.objects.order_by("name"), to_field_name="uuid", required=False
    )
    tournament = forms.UUIDField(required=False, widget=forms.HiddenInput)
    outcome = forms.ChoiceField(
        choices=blank_choices([*PLAYER_OUTCOMES.items(), (Outcome.DRAW, "draw"),
                                (Outcome.A, "A (first player) wins"),
                                (Outcome.B, "B (second player) wins")]),
        required=False,
    )
    status = forms.ChoiceField(choices=blank_choices(Status.choices), required=False)
    date_from = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        widget=forms.SearchInput(attrs={"placeholder": "environment title or transcript words"}),
    )

    def clean(self) -> dict:
        data = super().clean()
        if data.get("outcome") in PLAYER_OUTCOMES and not data.get("player"):
            raise forms.ValidationError(
                f"Outcome “{PLAYER_OUTCOMES[data['outcome']]}” needs a player: choose one.")
        return data

    def filters(self) -> DuelFilters:
        """The valid part of the query as DuelFilters (invalid fields are ignored)."""
        data = self.cleaned_data if self.is_valid() else {}
        player = data.get("player")
        return DuelFilters(
            player=player.uuid if player else None,
            tournament=data.get("tournament"),
            outcome=data.get("outcome") or "",
            status=data.get("status") or "",
            date_from=data.get("date_from"),
            date_to=data.get("date_to"),
            q=(data.get("q") or "").strip(),
        )


class EnvironmentFilterForm(forms.Form):
    author = PlayerChoiceField(
        queryset=Player.objects.order_by("name"), to_field_name="uuid", required=False
    )
    family = forms.CharField(required=False, max_length=60)
    tag = forms.CharField(required=False, max_length=60)
    status = forms.ChoiceField(
        choices=blank_choices(EnvironmentStatus.choices), required=False, label="Validity"
    )
    gain_min = forms.FloatField(
        required=False,
        min_value=-1,
        max_value=1,
        label="Hint gain ≥",
        # Hint gains read in percentage points; the filter takes the fraction (0.2 = +20 pp).
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0.2 = +20 pp",
                                        "title": "a fraction: 0.2 is +20 pp"}),
    )
    gain_max = forms.FloatField(
        required=False,
        min_value=-1,
        max_value=1,
        label="Hint gain ≤",
        # Hint gains read in percentage points; the filter takes the fraction (0.2 = +20 pp).
        widget=forms.NumberInput(attrs={"step": "0.05", "placeholder": "0.2 = +20 pp",
                                        "title": "a fraction: 0.2 is +20 pp"}),
    )
    q = forms.CharField(required=False, max_length=200, label="Title")
    sort = forms.ChoiceField(
        choices=[(key, label) for key, (label, _) in ENVIRONMENT_SORTS.items()],
        required=False, label="Order",
    )

    def filters(self) -> EnvironmentFilters:
        data = self.cleaned_data if self.is_valid() else {}
        author = data.get("author")
        return EnvironmentFilters(
            author=author.uuid if author else None,
            family=(data.get("family") or "").strip(),
            tag=(data.get("tag") or "").strip(),
            status=data.get("status") or "",
            gain_min=data.get("gain_min"),
            gain_max=data.get("gain_max"),
            q=(data.get("q") or "").strip(),
            sort=data.get("sort") or "",
        )


# Choosing a player refreshes its readiness and last check beside the form (htmx).
_CHECKS = {"hx-get": "/duels/new/checks/", "hx-target": "#player-checks",
           "hx-swap": "outerHTML", "hx-trigger": "change", "hx-include": "[name=a],[name=b]"}


class DuelTriggerForm(forms.Form):
    """Two players, attempts per condition, observe mode and a cost cap for one ad-hoc duel."""

    a = CallablePlayerField(label="Player A", widget=forms.Select(attrs=_CHECKS))
    b = CallablePlayerField(label="Player B", widget=forms.Select(attrs=_CHECKS))
    attempts = forms.IntegerField(
        min_value=1, max_value=32, initial=4, label="Seeds per condition",
        help_text="The same seeds 0…k−1 are played without and with the hint.",
    )
    observe = forms.BooleanField(required=False, help_text="Setters see digests of earlier duels.")
    cost_cap = forms.FloatField(
        required=False,
        min_value=0,
        label="Cost cap (USD)",
        help_text="Stop new model calls beyond this; empty for no cap.",
    )

    def clean(self) -> dict:
        cleaned = super().clean()
        if cleaned.get("a") and cleaned.get("a") == cleaned.get("b"):
            raise forms.ValidationError("Pick two different players.")
        return cleaned

    def refuse_uncallable(self) -> bool:
        """Before a duel starts (an estimate needs no key): mark each chosen player that cannot
        be called here, with the fix; True when one is. A duel with such a player would fail
        after it started."""
        from duels.selectors.player_checks import player_credentials_problem

        refused = False
        for side in ("a", "b"):
            player = self.cleaned_data.get(side)
            if player is None or player.builtin or player.imported:
                continue
            problem = player_credentials_problem(player=player)
            if problem:
                self.add_error(side, f"{problem}. Then check it below (or run "
                                     f"`manage.py player_check {player.name}`).")
                refused = True
        return refused
