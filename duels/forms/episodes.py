"""The episode list's facets (GET): the same form narrows `/episodes/` and the cross-transcript
search's results."""

from __future__ import annotations

from django import forms
from django.utils.html import format_html, format_html_join

from duels.forms.dashboard import PlayerChoiceField, blank_choices
from duels.models import Condition, Environment, Evaluation, Player, Study, Tournament
from duels.selectors.episode_list import OUTCOMES, EpisodeFilters

PICKER_ENVIRONMENTS = 200  # the newest environments the picker offers (any uuid still works)


class EnvironmentPicker(forms.TextInput):
    """A uuid box that offers the newest environments by title as you type (a `<datalist>`:
    no JavaScript; any other environment's uuid can still be pasted)."""

    def render(self, name, value, attrs=None, renderer=None):
        attrs = {**(attrs or {}), "list": f"{name}-choices"}
        choices = (Environment.objects.select_related("author").order_by("-created_at", "-pk")
                   .only("uuid", "title", "author__name")[:PICKER_ENVIRONMENTS])
        options = format_html_join("", '<option value="{}">{} · {}</option>', (
            (environment.uuid, environment.title[:80],
             environment.author.name if environment.author_id else "a person")
            for environment in choices))
        return format_html('{}<datalist id="{}-choices">{}</datalist>',
                           super().render(name, value, attrs, renderer), name, options)


class EpisodeFilterForm(forms.Form):
    solver = PlayerChoiceField(queryset=Player.objects.order_by("name"), to_field_name="uuid",
                               required=False)
    setter = PlayerChoiceField(queryset=Player.objects.order_by("name"), to_field_name="uuid",
                               required=False, label="Setter (the environment's author)")
    condition = forms.ChoiceField(choices=blank_choices(Condition.choices), required=False)
    outcome = forms.ChoiceField(
        choices=blank_choices([(key, label) for key, (label, _) in OUTCOMES.items()]),
        required=False)
    environment = forms.UUIDField(
        required=False, label="Environment",
        help_text="Any copy of a design: every copy's episodes are listed.",
        widget=EnvironmentPicker(attrs={"size": 36, "placeholder": "type a title or a uuid"}))
    tournament = forms.ModelChoiceField(queryset=Tournament.objects.order_by("-created_at"),
                                        to_field_name="uuid", required=False)
    study = forms.ModelChoiceField(queryset=Study.objects.order_by("-created_at"),
                                   to_field_name="uuid", required=False)

    evaluation = forms.ModelChoiceField(
        queryset=Evaluation.objects.select_related("player", "panel").order_by("-created_at"),
        to_field_name="uuid", required=False, label="Panel evaluation")
    version = forms.UUIDField(
        required=False, label="Version (uuid)", help_text="That exact environment only.",
        widget=forms.TextInput(attrs={"size": 36, "placeholder": "uuid of an environment"}))
    domain = forms.CharField(required=False, max_length=60)
    seed = forms.IntegerField(required=False, min_value=-(2**31), max_value=2**31 - 1)
    final = forms.BooleanField(required=False, label="Final versions only",
                               help_text="Each study slot's last valid version.")
    peers = forms.BooleanField(required=False, label="Peers only",
                               help_text="The solver is not the environment's author.")
    flipped = forms.BooleanField(required=False, label="Flipped by the hint",
                                 help_text="Both plays of a solver and seed that failed "
                                           "unhinted and passed hinted.")

    FACETS = ("solver", "setter", "condition", "outcome", "environment", "tournament", "study",
              "evaluation", "version", "domain", "seed", "final", "peers", "flipped")

    def filters(self) -> EpisodeFilters:
        data = self.cleaned_data if self.is_bound and self.is_valid() else {}

        def uuid_of(name):
            value = data.get(name)
            return getattr(value, "uuid", value) or None

        return EpisodeFilters(
            solver=uuid_of("solver"), setter=uuid_of("setter"),
            condition=data.get("condition") or "", outcome=data.get("outcome") or "",
            environment=data.get("environment"), tournament=uuid_of("tournament"),
            study=uuid_of("study"), evaluation=uuid_of("evaluation"),
            version=data.get("version"), domain=(data.get("domain") or "").strip(),
            seed=data.get("seed"), final=bool(data.get("final")),
            peers=bool(data.get("peers")), flipped=bool(data.get("flipped")))
