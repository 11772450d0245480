"""Keep API keys out of logs and error messages.

Adapters register every key they load with `secret_register`. From then on `secret_scrub` replaces
the key in any text, and a log-record factory installed once per process scrubs every log record
(from any logger: ours, the SDKs', httpx's) before a handler sees it — so even `ANTHROPIC_LOG=debug`
or a DEBUG root logger cannot print a key that some library put into a message.
"""

from __future__ import annotations

import logging
import threading

REDACTED = "[redacted]"
# Shorter values are not treated as secrets: scrubbing "ab" from every log line would garble them.
MIN_SECRET_LENGTH = 8

_secrets: set[str] = set()
_lock = threading.Lock()
_installed = False
_formatter = logging.Formatter()


def secret_register(value: str) -> None:
    """Remember `value` as a secret to scrub from logs and messages from now on."""
    if len(value) < MIN_SECRET_LENGTH:
        return
    with _lock:
        _secrets.add(value)
        _install_log_scrubber()


def secret_scrub(text: str) -> str:
    """Return `text` with every registered secret replaced by `[redacted]`."""
    for secret in tuple(_secrets):
        if secret in text:
            text = text.replace(secret, REDACTED)
    return text


def _install_log_scrubber() -> None:
    global _installed
    if _installed:
        return
    make_record = logging.getLogRecordFactory()

    def scrubbing_record_factory(*args, **kwargs) -> logging.LogRecord:
        record = make_record(*args, **kwargs)
        if not _secrets:
            return record
        try:
            message = record.getMessage()
        except Exception:  # a malformed log call is the handler's problem, not ours
            return record
        scrubbed = secret_scrub(message)
        if scrubbed != message:
            record.msg, record.args = scrubbed, None
        if record.exc_info:
            # Formatters reuse `exc_text` when set, so a scrubbed traceback is what gets printed.
            traceback_text = _formatter.formatException(record.exc_info)
            record.exc_text = secret_scrub(traceback_text)
        return record

    logging.setLogRecordFactory(scrubbing_record_factory)
    _installed = True
