"""Sign-in forms (site and admin) that throttle repeated failures (duels.services.signin)."""

from __future__ import annotations

import ipaddress
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm

from duels.services.signin import (
    signin_blocked_message,
    signin_record_failure,
    signin_succeeded,
)


def client_address(request: Any) -> str | None:
    """The address a request came from.

    Behind the HTTPS proxy that DJANGO_SECURE=1 trusts, that is the last X-Forwarded-For entry:
    the one the proxy itself appended (a client can only add entries in front of it).
    """
    if request is None:
        return None
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if settings.DJANGO_SECURE and forwarded:
        last = forwarded.split(",")[-1].strip()
        try:
            return str(ipaddress.ip_address(last))
        except ValueError:
            pass
    return request.META.get("REMOTE_ADDR") or None


class ThrottledSignInMixin:
    """Refuse sign-in while throttled; count each failure; clear the account's on success."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username") or ""
        address = client_address(self.request)
        blocked = signin_blocked_message(username=username, address=address)
        if blocked:
            raise forms.ValidationError(blocked, code="throttled")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            signin_record_failure(username=username, address=address)
            raise
        signin_succeeded(username=username)
        return cleaned


class ThrottledAuthenticationForm(ThrottledSignInMixin, AuthenticationForm):
    """The site's sign-in form."""


class ThrottledAdminAuthenticationForm(ThrottledSignInMixin, AdminAuthenticationForm):
    """The admin's sign-in form."""
