"""Errors raised by the sandbox runner; each carries a message a person can act on."""

from __future__ import annotations


class SandboxError(Exception):
    """Base class of every sandbox failure."""


class SandboxTimeout(SandboxError):
    """A call or the whole episode took longer than its limit; the sandbox was killed."""


class SandboxMemoryExceeded(SandboxError):
    """The environment used more memory than the sandbox allows."""


class SandboxOutputExceeded(SandboxError):
    """A reply, an observation or the environment's log grew past its byte limit."""


class SandboxCrashed(SandboxError):
    """The sandbox was killed from outside (not by this host's limits, not by the environment),
    or its launcher failed; the message holds the exit status and stderr tail."""


class EnvCodeError(SandboxError):
    """The environment raised, or answered in a shape the contract does not allow."""


class EnvCrashed(EnvCodeError):
    """The environment ended or crashed its own process during a call (it exited, killed
    itself, segfaulted, or closed its channel); the message shows how. The sandbox is gone."""


class SandboxUnavailable(SandboxError):
    """No sandbox backend can run here; the message says what to install or configure."""
