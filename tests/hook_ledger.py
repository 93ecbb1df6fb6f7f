"""A ledger the hooks of the hook tests write to (their modules import it by its ordinary name)."""

from __future__ import annotations

from typing import Any

LEDGER: list[Any] = []
