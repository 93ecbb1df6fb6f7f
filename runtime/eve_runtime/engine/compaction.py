"""Compaction: older messages of a session summarized by a model call, so its context stays bounded.

Two ways in:

- **automatic**, before a model call, when the estimated context reaches the agent's
  `compaction.threshold_percent` of the model's context window (`model_context_window_tokens`
  from the agent config, else what the model reports, e.g. litellm's model info; unknown means
  never);
- **on request** (`POST .../compact`), applied when the session is idle (a request that arrives
  during a turn waits in the inbox until the turn ends), then `session.waiting`.

Either way the model gets the previous summary and a transcript of the messages to fold in; the
history becomes `user: "Summary of our conversation so far:"`, `assistant: <summary>`, then the
recent messages kept verbatim. System-role instructions are never in history, so they stay
outside the summary. The new history replaces the old one in the store in the same transaction
as `compaction.completed` and the checkpoint: a crash leaves the old history or the new one,
never a mix, and recovery afterwards reads only the compacted history. A summarization that
fails leaves the history as it was.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from eve_runtime.authoring.dynamic import DynamicResolver
from eve_runtime.crashpoints import crashpoint
from eve_runtime.engine.conversation import build_request
from eve_runtime.engine.ports import Session
from eve_runtime.events.catalog import StepAt
from eve_runtime.events.turns import CompactionCompleted, CompactionRequested
from eve_runtime.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from eve_runtime.models.base import Finish, Model, ModelError, ModelRequest, ModelSettings, TextDelta, ToolDefinition
from eve_runtime.store.base import DeliveryRecord

__all__ = [
    "KEEP_RECENT",
    "SUMMARY_HEADER",
    "compact_on_request",
    "compact_before_call",
    "compaction_prompt",
    "estimate_tokens",
]

logger = logging.getLogger("eve.compaction")

SUMMARY_HEADER = "Summary of our conversation so far:"
"""The user message that opens a compacted history; the summary follows as the assistant's."""
KEEP_RECENT = 10
"""At most this many recent messages are kept verbatim."""
KEEP_SHARE = 0.25
"""... and at most this share of the context window, so one compaction always makes room."""

_INSTRUCTIONS = (
    "Rewrite the previous checkpoint so that it also covers the conversation above; without a previous "
    "checkpoint, write the first one from the conversation alone.\n\n"
    "Whoever continues from this checkpoint sees nothing else of the conversation. State plainly what is "
    "already done, so it is not done twice, apart from what is still in progress or left to do. Keep the "
    "exact names, paths, commands, identifiers, error texts and numbers needed to go on. Reduce long tool "
    "results to what they established."
)


@dataclass(frozen=True)
class _Plan:
    previous: str | None
    folded: Sequence[Message]
    kept: Sequence[Message]
    cut: int
    """Index in the full history where the kept messages start."""


def estimate_tokens(request: ModelRequest) -> float:
    """A provider-neutral estimate of a request's context size: about four characters a token."""
    chars = 0
    for message in request.messages:
        chars += len(message.content)
        if isinstance(message, AssistantMessage):
            chars += sum(len(call.name) + len(json.dumps(call.arguments)) for call in message.tool_calls)
    return (chars + sum(map(_tool_chars, request.tools))) / 4


_tool_sizes: dict[int, int] = {}
"""Characters per tool definition, by `id` (dropped when the definition is collected)."""


def _tool_chars(tool: ToolDefinition) -> int:
    """A tool's name, description and schema in characters, counted once per definition.

    The engine makes an agent's definitions once (`RuntimeAgent.derive`), so every step's request
    holds the same objects: a connection's dozens of schemas are not serialized again each step.
    """
    size = _tool_sizes.get(id(tool))
    if size is None:
        size = _tool_sizes[id(tool)] = len(tool.name) + len(tool.description) + len(json.dumps(tool.input_schema))
        weakref.finalize(tool, _tool_sizes.pop, id(tool), None)
    return size


def _transcript(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            parts.append(f"### tool result ({message.name})\n{message.content}")
        elif isinstance(message, AssistantMessage):
            lines = [message.content] if message.content else []
            lines += [f"(called {c.name} {json.dumps(c.arguments, ensure_ascii=False)})" for c in message.tool_calls]
            parts.append("### assistant\n" + "\n".join(lines))
        else:
            parts.append(f"### {message.role}\n{message.content}")
    return "\n\n".join(parts)


def compaction_prompt(previous: str | None, messages: Sequence[Message]) -> str:
    """The user message asking for a summary: the previous one, the transcript, and what to write."""
    return (
        f"<previous-checkpoint>\n{previous or '(none)'}\n</previous-checkpoint>\n\n"
        f"<conversation>\nConversation transcript:\n{_transcript(messages)}\n</conversation>\n\n{_INSTRUCTIONS}"
    )


def _plan(session: Session, window: int | None, *, fold_all: bool) -> _Plan:
    """Which messages are folded into the summary and which are kept verbatim."""
    history = session.history
    head = 2 if session.state.summary is not None else 0
    rest = history[head:]
    budget = window * KEEP_SHARE if window else float("inf")
    start, used = len(rest), 0.0
    while start > 0 and len(rest) - start < KEEP_RECENT:
        size = estimate_tokens(ModelRequest(messages=[rest[start - 1]]))
        if used + size > budget:
            break
        start, used = start - 1, used + size
    if start == 0 and fold_all:
        start = len(rest)  # a requested compaction of a short history folds it all
    last_user = next((i for i in range(len(rest) - 1, -1, -1) if isinstance(rest[i], UserMessage)), None)
    if last_user is not None and start > last_user and len(rest) - last_user <= KEEP_RECENT and not fold_all:
        start = last_user  # the newest request stays verbatim, however long
    while start < len(rest) and isinstance(rest[start], ToolMessage):
        start += 1  # a call's results stay with the call that asked for them
    return _Plan(previous=session.state.summary, folded=rest[:start], kept=rest[start:], cut=head + start)


async def _summarize(session: Session, model: Model, prompt: str) -> tuple[str, Finish | None]:
    system = [SystemMessage(content=i.content) for i in session.agent.manifest.instructions if i.role == "system"]
    config = session.agent.config
    request = ModelRequest(
        messages=[*system, UserMessage(content=prompt)],
        settings=ModelSettings(model_options=dict(config.model_options)),
    )
    pieces: list[str] = []
    finish: Finish | None = None
    async for event in model.stream(request):
        if isinstance(event, TextDelta):
            pieces.append(event.text)
        elif isinstance(event, Finish):
            finish = event
    summary = "".join(pieces).strip()
    if not summary:
        raise ModelError("the model returned an empty summary", retryable=False)
    return summary, finish


async def _compact(session: Session, model: Model, requested: CompactionRequested, plan: _Plan) -> list[Message] | None:
    """Summarize; on success `compaction.completed` and the new history, which the caller commits.

    None when the summary failed: nothing changed.
    """
    try:
        summary, finish = await _summarize(session, model, compaction_prompt(plan.previous, plan.folded))
    except Exception as exc:  # a failed summary leaves the history as it was
        logger.warning("session %s: compaction failed: %s", session.session_id, exc)
        return None
    if finish is not None:
        session.add_usage(finish)
    crashpoint("during-compaction")
    state = session.state
    turn = state.turn
    if turn is not None:  # client context goes before the turn's first user message, wherever it is now
        turn.user_index = max(turn.user_index - plan.cut, 0) + 2
    state.summary = summary
    state.tasks_note = None  # the model is told about working tasks again
    state.user_instructions = {}  # and given user-role instructions again (the summary may have dropped them)
    session.emit(CompactionCompleted(requested.at, requested.session_id, requested.model_id))
    return [UserMessage(content=SUMMARY_HEADER), AssistantMessage(content=summary), *plan.kept]


async def _context_window(session: Session, model: Model) -> int | None:
    configured = session.agent.config.model_context_window_tokens
    if configured is not None:
        return configured
    reported = getattr(model, "context_window_tokens", None)
    if reported is None:
        return None
    window = await reported()
    return window if isinstance(window, int) else None


async def compact_before_call(
    session: Session, model: Model, model_id: str, step_index: int, request: ModelRequest
) -> bool:
    """Compact when the next call's context reaches the threshold. Returns whether history changed."""
    window = await _context_window(session, model)
    if window is None:
        return False
    estimate = estimate_tokens(request) + len(_INSTRUCTIONS) / 4
    if estimate < session.agent.config.compaction.threshold_percent * window:
        return False
    plan = _plan(session, window, fold_all=False)
    if not plan.folded:
        return False  # only recent messages: nothing to fold (the fixed context alone is this large)
    requested = CompactionRequested(StepAt.of(session.turn, step_index), session.session_id, model_id, estimate)
    session.emit(requested)
    history = await _compact(session, model, requested, plan)
    if history is None:
        return False
    await session.commit(history=history, replace_history=True)
    return True


def _session_model(session: Session) -> tuple[Model, str] | None:
    """The model an idle session's compaction uses: the agent's (or the one a resolver chose)."""
    configured = session.agent.config.model
    if isinstance(configured, DynamicResolver):
        model_id = session.state.model_id
        return None if model_id is None else (session.host.model(model_id), model_id)
    if isinstance(configured, str):
        return session.host.model(configured), configured
    return configured, configured.model_id


async def compact_on_request(session: Session, delivery: DeliveryRecord) -> None:
    """`POST .../compact` on an idle session: `compaction.requested`, `compaction.completed`, `session.waiting`.

    The events carry the next turn's id. A failed summary (or a compaction a crash interrupted,
    which is not run again) goes straight back to `session.waiting` with the history unchanged.
    """
    await session.continue_deliveries()
    state = session.state
    chosen = _session_model(session)
    interrupted = state.compacting
    history: list[Message] | None = None
    if chosen is not None and not interrupted and session.history:
        model, model_id = chosen
        at = StepAt(state.next_sequence, 0, f"turn_{state.next_sequence}")
        request = build_request(session.agent, state, session.history, ModelSettings(), is_root=session.is_root)
        requested = CompactionRequested(at, session.session_id, model_id, estimate_tokens(request))
        session.emit(requested)
        state.compacting = True
        await session.commit()
        plan = _plan(session, await _context_window(session, model), fold_all=True)
        history = await _compact(session, model, requested, plan)
    elif interrupted:
        logger.warning("session %s: a compaction was interrupted; it is not run again", session.session_id)
    state.compacting = False
    session.emit_waiting()
    if history is None:
        await session.commit(consumed=[delivery.id])
    else:
        await session.commit(history=history, replace_history=True, consumed=[delivery.id])
