"""Stored results derived from stored episodes and versions by the one scoring rule."""
