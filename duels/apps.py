from django.apps import AppConfig
from django.db.models.signals import post_migrate, pre_save

from envduels_site.startup import collector_resumed


def _step_search_index(sender, using, **kwargs) -> None:
    """Put back the step search index's SQLite triggers a table rebuild may have dropped."""
    from django.db import connections

    from duels.services.search_index import step_search_index_install

    step_search_index_install(connection=connections[using])


def _analytics_data_changed(sender, **kwargs) -> None:
    """Let the analytics service mark its snapshot stale and queue a refresh (imported when data
    changes, not at start-up: the service reads the analytics selectors)."""
    from duels.services.analytics import analytics_data_changed

    analytics_data_changed()


def _user_deactivated(sender, instance, raw=False, **kwargs) -> None:
    """A user saved inactive who was active: their tokens end for good (reactivating the
    account does not revive them)."""
    if raw or instance.pk is None or instance.is_active:
        return
    from duels.services.api_tokens import api_tokens_end_for_deactivated

    api_tokens_end_for_deactivated(user=instance)


class DuelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "duels"
    verbose_name = "Environment Duels"

    def ready(self) -> None:
        # The background tasks register by name; each kind of run registers itself as the
        # owner of its episodes (duels/engine/owners.py).
        from duels import tasks  # noqa: F401
        from duels.engine import duel_owner  # noqa: F401

        # Panels add their record kinds to the envduels.v1 file (duels/exchange/record_kinds.py).
        from duels.panels import exchange_records  # noqa: F401
        from duels.panels import owner as evaluation_owner  # noqa: F401
        from duels.signals import data_changed
        from duels.studies import owner  # noqa: F401

        post_migrate.connect(_step_search_index, sender=self)
        from django.contrib.auth import get_user_model

        pre_save.connect(_user_deactivated, sender=get_user_model(),
                         dispatch_uid="api_tokens_end_for_deactivated")
        data_changed.connect(_analytics_data_changed, dispatch_uid="analytics_data_changed")
        # The last installed app: start-up is over (envduels_site/startup.py).
        collector_resumed()
