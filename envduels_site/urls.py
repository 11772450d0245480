"""Top-level URLs: admin, sign-in, and the duels app (pages, API)."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from duels.forms.accounts import ThrottledAuthenticationForm

accounts = [
    # Sign-in throttles repeated failures per account and per address (duels.forms.accounts).
    path("login/", auth_views.LoginView.as_view(
        authentication_form=ThrottledAuthenticationForm), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("password_change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("password_change/done/", auth_views.PasswordChangeDoneView.as_view(),
         name="password_change_done"),
]
if settings.EMAIL_HOST:
    # Resetting a password means mailing a link: without a mail server the pages could only
    # pretend to have sent one.
    accounts += [
        path("password_reset/", auth_views.PasswordResetView.as_view(), name="password_reset"),
        path("password_reset/done/", auth_views.PasswordResetDoneView.as_view(),
             name="password_reset_done"),
        path("reset/<uidb64>/<token>/", auth_views.PasswordResetConfirmView.as_view(),
             name="password_reset_confirm"),
        path("reset/done/", auth_views.PasswordResetCompleteView.as_view(),
             name="password_reset_complete"),
    ]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include(accounts)),
    path("", include("duels.urls")),
]

# Malformed parameters answer 400 with their message (duels.views.errors), never a 500.
handler400 = "duels.views.errors.bad_request"
