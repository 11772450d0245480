"""Forms for rubrics, annotation queues, answers and adjudications."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

from django import forms
from django.contrib.auth import get_user_model
from django.http import QueryDict

from duels.forms.dashboard import EnvironmentFilterForm, filter_form_problems
from duels.forms.episodes import EpisodeFilterForm
from duels.forms.training_sets import TrainingSetForm
from duels.models import Panel, QuestionKind, QueueKind, Rubric, Study, Tournament
from duels.services.queues import MAX_GUIDELINES, QueueSelection
from duels.services.rubrics import RubricError, rubric_clean_questions

QUESTION_SYNTAX = ("One question a line: key | kind | prompt | description | options. Kinds: "
                   "scale (options: the top of the scale, e.g. 5; add ' interval' to measure it "
                   "as an interval), single or multi (options: comma-separated labels), yesno, "
                   "text.")


def rubric_questions_parse(text: str) -> list[dict[str, Any]]:
    """The question lines of the rubric form as checked question dicts; RubricError lists
    every line at fault at once, each named by its line."""
    questions, places, problems = [], [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = [part.strip() for part in line.split("|")]
        if len(parts) < 3:
            problems.append(f"Line {number}: write key | kind | prompt (| description | "
                            "options).")
            continue
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
        places.append(f"Line {number}")
    try:
        if questions or not problems:
            questions = rubric_clean_questions(questions, places=places)
    except RubricError as exc:
        problems += exc.messages
    if problems:
        raise RubricError(sorted(problems, key=_line_number))
    return questions


def _line_number(problem: str) -> int:
    found = re.match(r"Line (\d+)", problem)
    return int(found.group(1)) if found else 10**9


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


SOURCE_LABELS = {
    "environments": "designs from the environments list",
    "tournament": "designs a tournament played",
    "study": "a study's versions",
    "panel": "a panel's versions",
    "training_set": "designs of a curated training set",
    "episodes": "episodes from the episode list",
    "steps": "steps a transcript search finds",
}


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
        to_field_name="username", widget=forms.CheckboxSelectMultiple,
        error_messages={"required": "Annotators: tick at least one person."})
    source = forms.ChoiceField(choices=list(SOURCE_LABELS.items()), initial="environments",
                               label="items")
    filters = forms.CharField(
        required=False, max_length=1000,
        help_text="As in the list page's address: environments list or training-set filters "
                  "(family=maze&gain_min=0.2), episode facets (solver=UUID&condition=hinted), "
                  "or for steps the search words and facets (q=lantern&outcome=not_passed). "
                  "Empty: every design or episode.")
    tournament = forms.ModelChoiceField(queryset=Tournament.objects.order_by("-created_at"),
                                        to_field_name="uuid", required=False)
    study = forms.ModelChoiceField(queryset=Study.objects.defer("figures")
                                   .order_by("-created_at"), to_field_name="uuid",
                                   required=False, help_text="For “a study's versions”.")
    panel = forms.ModelChoiceField(queryset=Panel.objects.order_by("-created_at"),
                                   to_field_name="uuid", required=False,
                                   help_text="For “a panel's versions”.")
    guidelines = forms.CharField(
        required=False, max_length=MAX_GUIDELINES,
        help_text="What annotators read before their first item: what to look for, how to "
                  "use the scale, when to tick a label.",
        widget=forms.Textarea(attrs={"rows": 4}))

    def selection(self) -> QueueSelection:
        """The items' source and filters (call after is_valid()); a ValidationError names the
        `filters` field and each filter at fault."""
        data = self.cleaned_data
        query = QueryDict(mutable=True)
        for key, values in parse_qs(data.get("filters") or "").items():
            query.setlist(key, values)
        described = dict(query.items())
        source = data["source"]
        if source == "environments":
            form = EnvironmentFilterForm(query)
            if query:
                _check(form, "Filters")
            return QueueSelection(source="environments", environments=form.filters(),
                                  described=described)
        if source == "training_set":
            form = TrainingSetForm(query)
            _check(form, "Training-set filters")
            return QueueSelection(source="training_set", training_set=form.filters(),
                                  described=described)
        if source in ("episodes", "steps"):
            words = query.pop("q", [""])[-1].strip() if source == "steps" else ""
            if source == "steps" and not words:
                raise forms.ValidationError(
                    {"filters": "Steps: give the words they hold, e.g. q=lantern."})
            form = EpisodeFilterForm(query or None)
            if query:
                _check(form, "Filters")
            return QueueSelection(source=source, episodes=form.filters(), search=words,
                                  described=described)
        if source in ("study", "panel"):
            chosen = data.get(source)
            if chosen is None:
                raise forms.ValidationError({source: f"Choose the {source}."})
            return QueueSelection(source=source, **{source: chosen.uuid},
                                  described={source: chosen.name})
        tournament = data.get("tournament")
        if tournament is None:
            raise forms.ValidationError({"tournament": "Choose the tournament."})
        return QueueSelection(source="tournament", tournament=tournament.uuid,
                              described={"tournament": tournament.name})


def _check(form: forms.Form, what: str) -> None:
    """Raise each problem of a filter form on the `filters` field, named as a person reads it:
    "Filters: gain_min: Enter a number. (got 'x')"."""
    problems = filter_form_problems(form)
    if problems:
        raise forms.ValidationError({"filters": [f"{what}: {problem}" for problem in problems]})


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
