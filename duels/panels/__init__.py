"""Panels: frozen sets of environment versions, their manifest, import, export and evaluation."""
