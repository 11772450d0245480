"""A tournament published as a static website (`manage.py export --format site`)."""

from __future__ import annotations

from duels.publishing.pages import Leave
from duels.publishing.writer import SiteExportError, SiteReport, site_export

__all__ = ["Leave", "SiteExportError", "SiteReport", "site_export"]
