"""URLs of the duels app. Each area keeps its routes in its own view module."""

from django.urls import include, path

from duels.views import (
    analytics,
    annotations,
    api,
    flywheel,
    operations,
    pages,
    publish,
    queues,
)

app_name = "duels"

urlpatterns = [
    *pages.urlpatterns,
    *annotations.urlpatterns,
    *queues.urlpatterns,
    *analytics.urlpatterns,
    *flywheel.urlpatterns,
    *publish.urlpatterns,
    *operations.urlpatterns,
    path("api/v1/", include((api.urlpatterns, "api"))),
]
