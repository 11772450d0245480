"""Handing environments to trainers and harnesses: exporters, runtimes, servers."""
