"""The study form (operators): players, environments per author, seeds, hardening rounds,
domains, self-play, observe mode, concurrency and a cost cap. Every value is checked again by
`duels.studies.creation.study_plan`, the same checks `manage.py study` makes."""

from __future__ import annotations

from django import forms

from duels.models import Player
from duels.models.studies import MAX_HARDEN_ROUNDS
from duels.selectors.players import player_callable
from duels.studies.creation import (
    MAX_CONCURRENCY,
    MAX_PER_AUTHOR,
    MAX_SEEDS,
    StudyError,
    StudyPlan,
    study_plan,
)


class PlayersField(forms.ModelMultipleChoiceField):
    def label_from_instance(self, obj: Player) -> str:
        return obj.label


class StudyForm(forms.Form):
    players = PlayersField(queryset=player_callable(), to_field_name="uuid",
                           widget=forms.CheckboxSelectMultiple,
                           help_text="Every player writes environments and plays every version.")
    per_author = forms.IntegerField(min_value=1, max_value=MAX_PER_AUTHOR, initial=2,
                                    label="Environments per author (M)")
    seeds = forms.IntegerField(min_value=1, max_value=MAX_SEEDS, initial=2,
                               label="Benchmark seeds per environment (k)",
                               help_text="Drawn once per environment; every solver plays the "
                                         "same seeds without and with the hint.")
    harden_rounds = forms.IntegerField(min_value=0, max_value=MAX_HARDEN_ROUNDS, initial=1,
                                       label="Hardening rounds (H)",
                                       help_text="Revisions after the field played a version.")
    domains = forms.CharField(max_length=1300, initial="maze,cipher",
                              help_text="Comma-separated; each author's slots are spread over "
                                        "them, and the setter prompt names the slot's domain.")
    self_play = forms.BooleanField(required=False, initial=True,
                                   label="Authors play their own versions",
                                   help_text="Kept apart: only the direct common-panel solve "
                                             "counts them.")
    observe = forms.BooleanField(required=False,
                                 help_text="Setters see digests of versions already played.")
    concurrency = forms.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, initial=8,
                                     help_text="Field plays in flight at once.")
    cost_cap = forms.FloatField(required=False, min_value=0, label="Cost cap (USD)",
                                help_text="Stop new model calls beyond this; empty for no cap.")
    name = forms.CharField(max_length=200, required=False)

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.plan = study_plan(
                players=list(data["players"]), per_author=data["per_author"],
                seeds=data["seeds"], harden_rounds=data["harden_rounds"],
                domains=data["domains"], self_play=data["self_play"],
                observe=data["observe"], concurrency=data["concurrency"],
                cost_cap=data.get("cost_cap"), name=data.get("name") or "")
        except StudyError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def study_plan(self) -> StudyPlan:
        """The checked plan of a valid form."""
        return self.plan
