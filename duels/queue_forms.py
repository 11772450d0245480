"""Forms for rubrics, annotation queues, answers and adjudications."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from django import forms
from django.contrib.auth import get_user_model
from django.http import QueryDict

from duels.forms import EnvironmentFilterForm
from duels.models import QuestionKind, QueueKind, Rubric, Tournament
from duels.services.queues import SOURCES, QueueSelection
from duels.services.rubrics import RubricError
from duels.training_set_forms import TrainingSetForm

QUESTION_SYNTAX = ("One question a line: key | kind | prompt | description | options. Kinds: "
                   "scale (options: the top of the scale, e.g. 5; add ' interval' to measure it "
                   "as an interval), single or multi (options: comma-separated labels), yesno, "
                   "text.")


def rubric_questions_parse(text: str) -> list[dict[str, Any]]:
    """The question lines of the rubric form as question dicts (RubricError names the line)."""
    questions = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3:
            raise RubricError(f"Line {number}: write key | kind | prompt (| description | "
                              "options).")
        parts += [""] * (5 - len(parts))
        key, kind, prompt, description, options = parts[:5]
        question: dict[str, Any] = {"key": key, "kind": kind, "prompt": prompt,
                                    "description": description}
        if kind == QuestionKind.SCALE:
            words = options.split()
            question["scale_max"] = words[0] if words else 5
            question["level"] = "interval" if "interval" in words[1:] else "ordinal"
        elif kind in (QuestionKind.SINGLE, QuestionKind.MULTI):
            question["labels"] = options
        questions.append(question)
    return questions


def rubric_questions_text(rubric: Rubric) -> str:
    """The rubric's questions in the form's one-line syntax (for editing a new version)."""
    lines = []
    for q in rubric.questions:
        options = ""
        if q["kind"] == QuestionKind.SCALE:
            options = str(q["scale_max"]) + (" interval" if q.get("level") == "interval" else "")
        elif q["kind"] in (QuestionKind.SINGLE, QuestionKind.MULTI):
            options = ", ".join(q["labels"])
        lines.append(" | ".join([q["key"], q["kind"], q["prompt"], q.get("description", ""),
                                 options]).rstrip(" |"))
    return "\n".join(lines)


class RubricForm(forms.Form):
    name = forms.CharField(max_length=120)
    description = forms.CharField(required=False, max_length=2000,
                                  widget=forms.Textarea(attrs={"rows": 2}))
    questions = forms.CharField(widget=forms.Textarea(attrs={"rows": 8, "class": "mono"}),
                                help_text=QUESTION_SYNTAX, max_length=20_000)


class QueueForm(forms.Form):
    name = forms.CharField(max_length=120)
    rubric = forms.ModelChoiceField(queryset=Rubric.objects.order_by("name", "-version"),
                                    to_field_name="uuid")
    kind = forms.ChoiceField(choices=QueueKind.choices, initial=QueueKind.SINGLE)
    pair_question = forms.CharField(
        required=False, max_length=40, label="pairwise question (key)",
        help_text="Pairwise queues: the key of the rubric question the two designs are "
                  "compared on.")
    overlap = forms.IntegerField(min_value=1, max_value=20, initial=2,
                                 help_text="How many annotators answer each item.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        to_field_name="username", widget=forms.CheckboxSelectMultiple)
    source = forms.ChoiceField(choices=[(s, s.replace("_", " ")) for s in SOURCES],
                               initial="environments", label="designs from")
    filters = forms.CharField(
        required=False, max_length=1000,
        help_text="Environments list or training-set filters as in the page's address, "
                  "e.g. family=maze&gain_min=0.2 (empty: every design).")
    tournament = forms.ModelChoiceField(queryset=Tournament.objects.order_by("-created_at"),
                                        to_field_name="uuid", required=False)

    def selection(self) -> QueueSelection:
        """The designs' source and filters (call after is_valid())."""
        data = self.cleaned_data
        query = QueryDict(mutable=True)
        for key, values in parse_qs(data.get("filters") or "").items():
            query.setlist(key, values)
        described = dict(query.items())
        if data["source"] == "environments":
            form = EnvironmentFilterForm(query)
            if query and not form.is_valid():
                raise forms.ValidationError(f"Filters: {form.errors.as_text()}")
            return QueueSelection(source="environments", environments=form.filters(),
                                  described=described)
        if data["source"] == "training_set":
            form = TrainingSetForm(query)
            if not form.is_valid():
                raise forms.ValidationError(f"Training-set filters: {form.errors.as_text()}")
            return QueueSelection(source="training_set", training_set=form.filters(),
                                  described=described)
        tournament = data.get("tournament")
        return QueueSelection(source="tournament",
                              tournament=tournament.uuid if tournament else None,
                              described={"tournament": tournament.name if tournament else ""})


def answer_values_from_post(*, rubric: Rubric, post: QueryDict) -> dict[str, Any]:
    """The raw answer of each question from the work page's POST (checked by the service)."""
    values: dict[str, Any] = {}
    for question in rubric.questions:
        key = question["key"]
        if question["kind"] == QuestionKind.MULTI:
            values[key] = post.getlist(key)
        else:
            values[key] = post.get(key, "")
    return values
