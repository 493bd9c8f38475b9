"""Start-up checks of SPEC 7.2 beyond ``validate_config``: those that read settings svc
accepts without using them (the reference's keys, ``LoadedConfig.raw``), and TLS."""

from __future__ import annotations

from typing import TYPE_CHECKING

from svc.tls.checks import client_tls_errors, server_tls_errors

if TYPE_CHECKING:
    from svc.config_file import LoadedConfig

__all__ = ["startup_errors"]


def startup_errors(loaded: LoadedConfig) -> list[str]:
    """Every problem the reference would stop on, in its order where it has one."""
    errors = server_tls_errors(loaded.config.server)
    errors += client_tls_errors(loaded.raw)
    return errors
