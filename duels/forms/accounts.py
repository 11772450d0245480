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


def _ip(value: str | None) -> str | None:
    """`value` as a normalised IP address, or None when it is not one."""
    try:
        return str(ipaddress.ip_address((value or "").strip()))
    except ValueError:
        return None


def _trusted_proxy(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    return any(ip in ipaddress.ip_network(network, strict=False)
               for network in settings.ENVDUELS_TRUSTED_PROXIES)


def client_address(request: Any) -> str | None:
    """The address a request came from, or None when it cannot be known.

    The peer's own address, unless the peer is a trusted proxy (ENVDUELS_TRUSTED_PROXIES): then
    the last X-Forwarded-For entry, the one that proxy appended (a client can only add entries
    in front of it). Whatever does not parse as an IP address is unknown, never stored.
    """
    if request is None:
        return None
    peer = _ip(request.META.get("REMOTE_ADDR"))
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if peer is not None and forwarded and _trusted_proxy(peer):
        return _ip(forwarded.rsplit(",", 1)[-1])
    return peer


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
