"""Forms for notes (annotations) and for the staff import page."""

from __future__ import annotations

from django import forms

from duels.models import STARTER_TAGS, Annotation
from duels.services.annotations import MAX_TEXT_LENGTH, AnnotationInput

RATING_CHOICES = [("", "no rating"), *((str(n), "★" * n) for n in range(1, 6))]


class AnnotationForm(forms.Form):
    """Starter tags as check boxes (keys 1–7 in the review queue), free tags, rating, text."""

    tags = forms.MultipleChoiceField(
        choices=[(tag, tag) for tag in STARTER_TAGS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )
    other_tags = forms.CharField(
        required=False,
        max_length=500,
        label="other tags",
        help_text="Comma-separated.",
        widget=forms.TextInput(attrs={"list": "annotation-tags", "autocomplete": "off"}),
    )
    rating = forms.TypedChoiceField(
        choices=RATING_CHOICES, coerce=int, empty_value=None, required=False
    )
    # The cap is the service's, checked after each CRLF a browser sends counts once; the
    # browser's own maxlength counts line breaks once too.
    text = forms.CharField(
        required=False,
        label="note",
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "Plain text; shown as written.",
                                     "maxlength": MAX_TEXT_LENGTH}),
    )
    line_start = forms.IntegerField(required=False, min_value=1, label="from line")
    line_end = forms.IntegerField(required=False, min_value=1, label="to line")

    def __init__(self, *args, with_lines: bool = True, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not with_lines:
            del self.fields["line_start"]
            del self.fields["line_end"]

    @classmethod
    def for_annotation(cls, annotation: Annotation) -> AnnotationForm:
        starter = [tag for tag in annotation.tags if tag in STARTER_TAGS]
        other = [tag for tag in annotation.tags if tag not in STARTER_TAGS]
        return cls(
            initial={
                "tags": starter,
                "other_tags": ", ".join(other),
                "rating": annotation.rating,
                "text": annotation.text,
                "line_start": annotation.line_start,
                "line_end": annotation.line_end,
            },
            with_lines=annotation.environment_id is not None,
        )

    def to_input(self) -> AnnotationInput:
        """The cleaned data as the service's input (call after is_valid())."""
        data = self.cleaned_data
        other = [tag for tag in (data.get("other_tags") or "").split(",") if tag.strip()]
        return AnnotationInput(
            tags=(*data.get("tags", []), *other),
            rating=data.get("rating"),
            text=data.get("text") or "",
            line_start=data.get("line_start"),
            line_end=data.get("line_end"),
        )


class ImportForm(forms.Form):
    file = forms.FileField(help_text="An envduels.v1 JSONL file, as written by `manage.py export`.")


class TransferImportForm(forms.Form):
    csv_file = forms.FileField(
        label="CSV file",
        help_text="Columns: learner, environment (uuid), author, benchmark, before, after.",
    )
