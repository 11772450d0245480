"""The evaluation form on a panel's page (operators): the player, the first n seeds of each
version, the first m versions, the hint level, concurrency and a cost cap. Every value is checked
again by `duels.panels.evaluation.evaluation_plan`, the checks `manage.py evaluate` makes."""

from __future__ import annotations

from django import forms

from duels.models import Panel, Player
from duels.panels.errors import PanelError
from duels.panels.evaluation import MAX_CONCURRENCY, EvaluationPlan, evaluation_plan
from duels.selectors.players import player_callable


class PlayerField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Player) -> str:
        return obj.label


class EvaluationForm(forms.Form):
    player = PlayerField(queryset=player_callable(), to_field_name="uuid",
                         help_text="It plays every version, seed and condition it has not "
                                   "played yet.")
    seeds_per_environment = forms.IntegerField(
        min_value=1, required=False, label="Seeds per version",
        help_text="Each version's first n benchmark seeds; empty for all of them.")
    environments = forms.IntegerField(min_value=1, required=False, label="Versions",
                                      help_text="The panel's first m versions; empty for all.")
    hint_level = forms.TypedChoiceField(choices=[(1, "1: hint or hint_1"), (2, "2: hint_2")],
                                        coerce=int, initial=1, label="Hint level")
    concurrency = forms.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, initial=4,
                                     help_text="Plays in flight at once.")
    cost_cap = forms.FloatField(required=False, min_value=0, label="Cost cap (USD)",
                                help_text="Stop new model calls beyond this; empty for no cap.")

    def __init__(self, *args, panel: Panel, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.panel = panel

    def clean(self) -> dict:
        data = super().clean()
        if self.errors:
            return data
        try:
            self.plan = evaluation_plan(
                panel=self.panel, player=data["player"],
                seeds_per_environment=data.get("seeds_per_environment"),
                environments=data.get("environments"), hint_level=data["hint_level"],
                concurrency=data["concurrency"], cost_cap=data.get("cost_cap"))
        except PanelError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def evaluation_plan(self) -> EvaluationPlan:
        return self.plan
