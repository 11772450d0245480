"""Top-level URLs: admin, sign-in, and the duels app (pages, API)."""

from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from duels.account_forms import ThrottledAuthenticationForm

urlpatterns = [
    path("admin/", admin.site.urls),
    # Sign-in throttles repeated failures per account and per address (duels.account_forms).
    path(
        "accounts/login/",
        LoginView.as_view(authentication_form=ThrottledAuthenticationForm),
        name="login",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("duels.urls")),
]

# Malformed parameters answer 400 with their message (duels.views.errors), never a 500.
handler400 = "duels.views.errors.bad_request"
