"""Usage between its shapes: a model call's `Usage`, a session's `UsageTotals`, and their wire forms.

- A model call's usage as `step.completed` carries it: [`call_usage_wire`] and back,
  [`call_usage_of`] (recovery reads it from the log).
- A session's running totals as terminal and waiting events carry them: [`totals_wire`]; a
  child's report to its parent carries what it spent since its last report ([`report_wire`]),
  which the parent adds to its own totals ([`add_reported`]).
"""

from __future__ import annotations

from typing import Any

from eve_runtime.checkpoint import UsageTotals
from eve_runtime.models.base import Usage

__all__ = ["add_call", "add_reported", "call_usage_of", "call_usage_wire", "report_wire", "totals_wire"]


def call_usage_wire(usage: Usage, cost_usd: float | None) -> dict[str, Any]:
    """One model call's usage as `step.completed` carries it (`costUsd` when the model reported a cost)."""
    data: dict[str, Any] = {
        "inputTokens": usage.input_tokens,
        "outputTokens": usage.output_tokens,
        "cacheReadTokens": usage.cache_read_tokens,
    }
    if usage.cache_write_tokens:
        data["cacheWriteTokens"] = usage.cache_write_tokens
    if cost_usd is not None:
        data["costUsd"] = round(cost_usd, 10)
    return data


def call_usage_of(data: dict[str, Any]) -> tuple[Usage, float | None]:
    """A model call's usage and cost from its `step.completed` wire form."""
    usage = Usage(
        input_tokens=data.get("inputTokens", 0),
        output_tokens=data.get("outputTokens", 0),
        cache_read_tokens=data.get("cacheReadTokens", 0),
        cache_write_tokens=data.get("cacheWriteTokens", 0),
    )
    return usage, data.get("costUsd")


def add_call(totals: UsageTotals, usage: Usage, cost_usd: float | None) -> None:
    """Count one model call in a session's totals."""
    totals.input_tokens += usage.input_tokens
    totals.output_tokens += usage.output_tokens
    totals.cache_read_tokens += usage.cache_read_tokens
    totals.cache_write_tokens += usage.cache_write_tokens
    if cost_usd is not None:
        totals.cost_usd = (totals.cost_usd or 0.0) + cost_usd


def totals_wire(totals: UsageTotals) -> dict[str, Any]:
    """A session's running totals as events carry them (`costUsd` only when some call reported a cost)."""
    data: dict[str, Any] = {
        "cacheReadTokens": totals.cache_read_tokens,
        "cacheWriteTokens": totals.cache_write_tokens,
        "inputTokens": totals.input_tokens,
        "outputTokens": totals.output_tokens,
    }
    if totals.cost_usd is not None:
        data["costUsd"] = round(totals.cost_usd, 10)
    return data


def report_wire(totals: UsageTotals, reported: UsageTotals) -> dict[str, float]:
    """What a child spent since its last report to its parent (`reported`), as the report carries it."""
    delta: dict[str, float] = {
        "inputTokens": totals.input_tokens - reported.input_tokens,
        "outputTokens": totals.output_tokens - reported.output_tokens,
        "cacheReadTokens": totals.cache_read_tokens - reported.cache_read_tokens,
        "cacheWriteTokens": totals.cache_write_tokens - reported.cache_write_tokens,
    }
    if totals.cost_usd is not None:
        delta["costUsd"] = totals.cost_usd - (reported.cost_usd or 0.0)
    return delta


def add_reported(totals: UsageTotals, data: dict[str, Any]) -> None:
    """Add what a child reported (`report_wire`'s shape) to the parent's totals."""
    totals.input_tokens += int(data.get("inputTokens", 0))
    totals.output_tokens += int(data.get("outputTokens", 0))
    totals.cache_read_tokens += int(data.get("cacheReadTokens", 0))
    totals.cache_write_tokens += int(data.get("cacheWriteTokens", 0))
    if data.get("costUsd") is not None:
        totals.cost_usd = (totals.cost_usd or 0.0) + float(data["costUsd"])
