"""What a running tool knows about the call it serves, and what it can wait for.

A tool receives a [`ToolContext`][eve_runtime.ToolContext] when it declares a parameter annotated
with it. Besides the call's coordinates it offers, to `async` tools:

- `await ctx.ask(prompt, options=[...])`: a question to the person (`input.requested` with a
  `question`); the turn waits until it is answered, withdrawn or dismissed;
- `await ctx.sleep(seconds)`: a pause;
- `await ctx.step(function, *args)`: run a side effect and remember its result;
- `ctx.abort_signal`: fires when the person steers the turn (a new message), so a tool waiting
  for a long time can stop early;
- `ctx.get_skill(name).file(path).text()`: a file of one of the agent's skill packages.
- `await ctx.get_sandbox()`: the session's sandbox (`/workspace`, its commands and files).

In a tool marked `@tool(workflow=True)` these are *durable*: each one is journaled on the
session's stream as it completes, and when a restart interrupts the tool, its body runs again
and replays the journal (a finished `step` is not run again, a `sleep` wakes at its original
time, an answered `ask` returns its answer at once) instead of the call being abandoned.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

from eve_runtime.authoring.skills import SkillHandle

if TYPE_CHECKING:  # only for annotations: importing eve_runtime stays light
    from eve_runtime.checkpoint import SessionState

if TYPE_CHECKING:
    from eve_runtime.authoring.sandbox_session import Sandbox

__all__ = [
    "AbortSignal",
    "AskResult",
    "ParentInfo",
    "Predecessor",
    "SessionInfo",
    "SleepResult",
    "ToolContext",
    "ToolHost",
    "lineage",
    "option_id",
]


class AskResult(TypedDict, total=False):
    """The outcome of `ctx.ask`.

    `status` is `answered` (with `optionId` and/or `text`), `dismissed`, `cancelled` (withdrawn
    because the turn was steered) or `unavailable` (nobody to ask: a task-mode session).
    """

    status: Literal["answered", "dismissed", "cancelled", "unavailable"]
    optionId: str
    text: str


class SleepResult(TypedDict, total=False):
    """The outcome of `ctx.sleep`: `{"status": "slept"}`, or `{"interrupted": True}` when the turn was steered."""

    status: Literal["slept"]
    interrupted: bool


class AbortSignal:
    """Fires when the turn is steered while the tool runs (the tool decides what to do)."""

    def __init__(self) -> None:
        import asyncio

        self._event = asyncio.Event()
        self.reason: str | None = None

    @property
    def aborted(self) -> bool:
        """Whether the signal fired."""
        return self._event.is_set()

    def abort(self, reason: str) -> None:
        """Fire the signal (the runtime does this)."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    async def wait(self) -> None:
        """Wait until the signal fires."""
        await self._event.wait()


@dataclass(frozen=True)
class ParentInfo:
    """For a subagent's session: the session and call it works for."""

    session_id: str
    call_id: str
    task_id: str
    turn_id: str
    name: str
    """The tool the parent called (the subagent's name, or `agent`)."""


@dataclass(frozen=True)
class Predecessor:
    """The stranded session a replacement session replaced (`session.started.data.predecessor`)."""

    session_id: str


def lineage(state: SessionState) -> tuple[ParentInfo | None, Predecessor | None]:
    """What code in the session sees as `parent` and `predecessor` (tools, hooks, dynamic resolvers)."""
    parent = state.parent
    info = (
        ParentInfo(parent.session_id, parent.call_id, parent.task_id, parent.turn_id, parent.name) if parent else None
    )
    return info, Predecessor(state.predecessor) if state.predecessor is not None else None


@dataclass(frozen=True)
class SessionInfo:
    """The session a call runs in."""

    id: str
    turn_id: str
    sequence: int
    principal_id: str
    """Who the session's person is (`local-dev` under `eve dev`, `token` under `eve start`)."""
    parent: ParentInfo | None = None
    predecessor: Predecessor | None = None
    """For a session that replaced a stranded one at its channel address: that session."""


class ToolHost(Protocol):
    """What the runtime provides behind a context (tests may provide their own)."""

    async def ask(self, request: dict[str, Any]) -> AskResult: ...

    async def sleep(self, seconds: float) -> SleepResult: ...

    async def step(self, name: str, function: Callable[..., Any], args: tuple[Any, ...]) -> Any: ...

    async def reply(self, output: Any) -> dict[str, Any]: ...

    def skill(self, name: str) -> SkillHandle | None: ...
    async def get_sandbox(self) -> Sandbox: ...


@dataclass(frozen=True)
class ToolContext:
    """Passed to a tool that declares a parameter annotated `ToolContext` (it never appears in the input schema).

    Example:
        ```python
        from eve_runtime import ToolContext, tool

        @tool(workflow=True)
        async def deploy(service: str, ctx: ToolContext) -> str:
            \"\"\"Deploy a service after a person confirms.\"\"\"
            answer = await ctx.ask(f"Deploy {service} now?", options=["Deploy", "Skip"])
            if answer.get("optionId") != "deploy":
                return "skipped"
            await ctx.sleep(60)  # let traffic drain; survives a restart
            return await ctx.step(start_rollout, service)  # runs once, even after a restart
        ```
    """

    session_id: str
    turn_id: str
    sequence: int
    """The turn's ordinal in the session."""
    call_id: str
    """Matches the `callId` of this call's stream events."""
    tool_name: str
    principal_id: str = "local-dev"
    parent: ParentInfo | None = None
    predecessor: Predecessor | None = None
    abort_signal: AbortSignal = field(default_factory=AbortSignal)
    host: ToolHost | None = field(default=None, repr=False, compare=False)

    @property
    def session(self) -> SessionInfo:
        """The session: id, turn, person, (for a subagent) its parent, (for a replacement) its predecessor."""
        return SessionInfo(
            self.session_id, self.turn_id, self.sequence, self.principal_id, self.parent, self.predecessor
        )

    def _host(self, what: str) -> ToolHost:
        if self.host is None:
            raise RuntimeError(f"ctx.{what}() needs a running eve session")
        return self.host

    async def ask(
        self,
        prompt: str,
        *,
        options: list[str] | None = None,
        allow_freeform: bool | None = None,
        display: Literal["select", "confirmation"] | None = None,
    ) -> AskResult:
        """Ask the person a question and wait for the answer.

        Options are labels; each gets an id (the label in lower case, dashes for spaces), so
        `options=["Deploy", "Skip"]` is answered with `{"optionId": "deploy"}`. Free text is
        allowed when there are no options, unless `allow_freeform` says otherwise.
        """
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("ctx.ask: prompt must be a non-empty string")
        request: dict[str, Any] = {"prompt": prompt}
        if options:
            request["options"] = [{"id": option_id(label), "label": label} for label in options]
        request["allowFreeform"] = allow_freeform if allow_freeform is not None else not options
        if display is not None:
            request["display"] = display
        return await self._host("ask").ask(request)

    async def sleep(self, seconds: float) -> SleepResult:
        """Pause for `seconds` (a steering message ends the pause early: `{"interrupted": True}`)."""
        if not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError("ctx.sleep: seconds must be a number >= 0")
        return await self._host("sleep").sleep(float(seconds))

    async def step(self, function: Callable[..., Any], *args: Any, name: str | None = None) -> Any:
        """Run `function(*args)` (sync in a thread, or async) and remember its JSON result.

        In a workflow tool the result is journaled: after a restart the step returns it again
        without running the function a second time.
        """
        label = name or str(getattr(function, "__name__", "step"))
        return await self._host("step").step(label, function, args)

    async def reply(self, output: Any) -> dict[str, Any]:
        """In a `@tool(serve=True)` tool: settle the current call with `output`, then wait for the next.

        Returns the next call's input (the model called the tool again with this task's
        `taskId`). Journaled like `step`: after a restart, earlier replies are not sent again.
        """
        return await self._host("reply").reply(output)

    def get_skill(self, name: str) -> SkillHandle:
        """One of the agent's skills (its own: a subagent never sees its parent's), to read its files.

        `ctx.get_skill("research").file("references/checklist.md").text()` reads a package file
        from the compiled skill; works in sync and async tools alike.

        Raises:
            LookupError: The agent has no skill of that name.
        """
        handle = self._host("get_skill").skill(name)
        if handle is None:
            raise LookupError(f"ctx.get_skill: the agent has no skill named {name!r}")
        return handle

    async def get_sandbox(self) -> Sandbox:
        """The session's sandbox, created (seeded, bootstrapped) on first use; see `eve_runtime.define_sandbox`.

        Example:
            ```python
            @tool
            async def run_script(script: str, ctx: ToolContext) -> str:
                \"\"\"Run a Python script in the sandbox.\"\"\"
                sandbox = await ctx.get_sandbox()
                await sandbox.write_text_file("analysis.py", script)
                result = await sandbox.run("python3 analysis.py")
                if result.exit_code != 0:
                    raise RuntimeError(result.stderr)
                return result.stdout
            ```
        """
        return await self._host("get_sandbox").get_sandbox()


def option_id(label: str) -> str:
    """The id an option label gets: lower case, runs of other characters as one dash."""
    cleaned = "".join(c if c.isalnum() else "-" for c in label.strip().lower())
    return "-".join(part for part in cleaned.split("-") if part) or "option"
