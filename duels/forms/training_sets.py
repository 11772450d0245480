"""The curated-training-set form of the /flywheel/ page (GET: preview and package download)."""

from __future__ import annotations

from django import forms

from duels.selectors.training_sets import MAX_SET_SIZE, TrainingSetFilters, training_set_check


class TrainingSetForm(forms.Form):
    size = forms.IntegerField(min_value=1, max_value=MAX_SET_SIZE, initial=20, required=False)
    per_cluster = forms.IntegerField(min_value=1, max_value=100, initial=1, required=False,
                                     label="At most per cluster")
    author = forms.CharField(max_length=200, required=False, help_text="player name or uuid")
    family = forms.CharField(max_length=60, required=False, label="Kind")
    tournament = forms.UUIDField(required=False)
    round = forms.IntegerField(min_value=1, required=False, help_text="1-based, with tournament")
    pass_low = forms.FloatField(min_value=0, max_value=1, initial=0, required=False,
                                label="Unhinted pass rate from")
    pass_high = forms.FloatField(min_value=0, max_value=1, initial=1, required=False, label="to")
    labelled = forms.ChoiceField(
        choices=[("exclude", "leave out designs labelled broken or hint-leaking"),
                 ("include", "count every design")],
        required=False, initial="exclude", label="Labels")

    def filters(self) -> TrainingSetFilters:
        """The filters of a valid form (call after is_valid())."""
        data = self.cleaned_data
        return TrainingSetFilters(
            size=data.get("size") or 20, per_cluster=data.get("per_cluster") or 1,
            author=data.get("author") or "", family=data.get("family") or "",
            tournament=data.get("tournament"),
            round_index=None if data.get("round") is None else data["round"] - 1,
            pass_low=0.0 if data.get("pass_low") is None else data["pass_low"],
            pass_high=1.0 if data.get("pass_high") is None else data["pass_high"],
            exclude_labelled=data.get("labelled") != "include")

    def clean(self) -> dict:
        data = super().clean()
        if not self.errors:
            for problem in training_set_check(filters=self.filters()):
                self.add_error(None, problem)
        return data
