"""Runs duels: authoring, validation, episodes, duels, tournaments, scheduling, leases, workers."""
