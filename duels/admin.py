"""Admin: every model with useful columns, filters and search."""

from __future__ import annotations

from django.contrib import admin

from duels import models
from duels.forms.accounts import ThrottledAdminAuthenticationForm
from duels.services.players import player_set_api_key_env

# The admin's sign-in throttles repeated failures like the site's.
admin.site.login_form = ThrottledAdminAuthenticationForm


@admin.register(models.Player)
class PlayerAdmin(admin.ModelAdmin):
    list_display = [
        "name", "provider", "model", "parameters_b", "builtin", "imported", "base_url",
        "api_key_env", "created_at",
    ]
    list_filter = ["provider", "builtin", "imported"]
    search_fields = ["name", "model", "base_url"]
    readonly_fields = ["uuid", "created_at"]

    def save_model(self, request, obj, form, change) -> None:
        super().save_model(request, obj, form, change)
        if "api_key_env" in form.changed_data:
            # The form has run Player.clean (the key-variable rule); the service clears the
            # imported mark once staff have chosen a variable.
            player_set_api_key_env(player=obj, api_key_env=obj.api_key_env)


class HintInline(admin.TabularInline):
    model = models.Hint
    extra = 0
    fields = ["text", "author"]


@admin.register(models.Environment)
class EnvironmentAdmin(admin.ModelAdmin):
    list_display = ["title", "author", "family", "status", "max_steps", "created_at"]
    list_filter = ["status", "family", "author"]
    search_fields = ["title", "uuid", "content_hash", "source"]
    readonly_fields = ["uuid", "content_hash", "created_at"]
    list_select_related = ["author"]
    inlines = [HintInline]


@admin.register(models.Hint)
class HintAdmin(admin.ModelAdmin):
    list_display = ["__str__", "environment", "author", "created_at"]
    search_fields = ["text", "environment__title"]
    list_select_related = ["environment", "author"]
    readonly_fields = ["uuid", "created_at"]


@admin.register(models.Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "status",
        "rounds",
        "attempts",
        "observe",
        "duels_done",
        "duels_total",
        "cost",
        "created_at",
    ]
    list_filter = ["status", "observe"]
    search_fields = ["name", "uuid"]
    readonly_fields = ["uuid", "created_at", "started_at", "finished_at"]


@admin.register(models.Duel)
class DuelAdmin(admin.ModelAdmin):
    list_display = [
        "uuid",
        "a",
        "b",
        "tournament",
        "status",
        "outcome",
        "setter_score_a",
        "setter_score_b",
        "created_at",
    ]
    list_filter = ["status", "outcome", "observe", "tournament"]
    search_fields = ["uuid", "a__name", "b__name"]
    list_select_related = ["a", "b", "tournament"]
    readonly_fields = ["uuid", "created_at", "started_at", "finished_at"]
    raw_id_fields = ["env_a", "env_b", "hint_a", "hint_b", "tournament"]


@admin.register(models.ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    list_display = [
        "created_at",
        "player",
        "role",
        "duel",
        "input_tokens",
        "output_tokens",
        "latency_ms",
    ]
    list_filter = ["role", "player"]
    search_fields = ["reply", "duel__uuid"]
    list_select_related = ["player", "duel"]
    raw_id_fields = ["duel"]


class StepInline(admin.TabularInline):
    model = models.Step
    extra = 0
    fields = ["index", "action", "done", "success", "reward", "format_error"]
    readonly_fields = fields
    show_change_link = True


@admin.register(models.Episode)
class EpisodeAdmin(admin.ModelAdmin):
    list_display = [
        "uuid",
        "solver",
        "environment",
        "condition",
        "seed",
        "status",
        "success",
        "steps",
        "end_reason",
        "sandbox_backend",
    ]
    list_filter = ["status", "condition", "success", "end_reason", "sandbox_backend", "solver"]
    search_fields = ["uuid", "environment__title", "solver__name", "error"]
    list_select_related = ["solver", "environment"]
    raw_id_fields = ["duel", "environment", "hint"]
    readonly_fields = ["uuid", "created_at", "started_at", "finished_at"]
    inlines = [StepInline]


@admin.register(models.Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ["episode", "index", "action", "done", "success", "latency_ms", "format_error"]
    list_filter = ["done", "success"]
    search_fields = ["episode__uuid", "action", "observation"]
    raw_id_fields = ["episode"]


@admin.register(models.Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = [
        "target_kind",
        "environment",
        "episode",
        "step_index",
        "author",
        "rating",
        "created_at",
    ]
    list_filter = ["target_kind", "rating"]
    search_fields = ["text", "environment__title", "author__username"]
    raw_id_fields = ["environment", "episode"]


@admin.register(models.TransferResult)
class TransferResultAdmin(admin.ModelAdmin):
    list_display = ["learner", "environment", "author", "benchmark", "before", "after"]
    list_filter = ["benchmark", "learner"]
    search_fields = ["benchmark", "learner__name"]
    raw_id_fields = ["environment"]


@admin.register(models.AnalyticsSnapshot)
class AnalyticsSnapshotAdmin(admin.ModelAdmin):
    list_display = ["computed_at", "duration_ms"]


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "created_at", "last_used_at"]
    readonly_fields = ["token_hash"]
