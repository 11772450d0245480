from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _step_search_index(sender, using, **kwargs) -> None:
    """Put back the step search index's SQLite triggers a table rebuild may have dropped."""
    from django.db import connections

    from duels.services.search_index import step_search_index_install

    step_search_index_install(connection=connections[using])


class DuelsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "duels"
    verbose_name = "Environment Duels"

    def ready(self) -> None:
        post_migrate.connect(_step_search_index, sender=self)
