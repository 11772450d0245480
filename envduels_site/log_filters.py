"""Logging filters: an expected refusal is one line in the log, not a traceback.

Django logs every `PermissionDenied` a view raises on `django.request` with the exception
attached, so each 403 (a non-staff user on a staff page, an outsider on someone's queue) wrote a
full traceback that reads like a crash. The refusal is the intended answer: its line stays
("Forbidden (Permission denied): /import/"), the traceback goes. Real errors keep theirs.
"""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied


class ExpectedRefusals(logging.Filter):
    """Drop the traceback of a 403 whose cause is PermissionDenied."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc_info = record.exc_info
        if (getattr(record, "status_code", None) == 403 and exc_info
                and isinstance(exc_info[1], PermissionDenied)):
            record.exc_info = None
            record.exc_text = None
        return True
