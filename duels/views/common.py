"""Helpers shared by the page views."""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.http import HttpRequest

PAGE_SIZE = 25


def paginate(request: HttpRequest, items: QuerySet | list, *, per_page: int = PAGE_SIZE) -> Page:
    """The page named by `?page=` (first page for a bad number, last for one past the end)."""
    return Paginator(items, per_page).get_page(request.GET.get("page"))


def cancel_confirmed(request: HttpRequest) -> bool:
    """True for the POST of the confirmation page (`confirm=yes`); anything else asks first."""
    return request.method == "POST" and request.POST.get("confirm") == "yes"
