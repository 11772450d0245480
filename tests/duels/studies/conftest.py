"""Fixtures of the study tests."""

from tests.helpers.studies import study_sandbox  # noqa: F401  (the fixture)
