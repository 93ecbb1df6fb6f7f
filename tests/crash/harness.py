"""Crash harness: a real `eve start` process killed with SIGKILL, a client history, and a checker.

- `EveProcess` runs `eve start` on an app scaffolded from the default template (offline `test`
  model) plus ledger tools that append one fsynced line per execution before returning.
- `Client` records every HTTP operation as ok / fail / *indeterminate* (the connection broke
  after the request was sent), Jepsen style, and retries indeterminate sends with their
  idempotency key.
- `check` reads every session twice from the start and verifies the invariants: no accepted
  message lost or duplicated, no started tool call run twice (and no tool run without a durable
  start record), identical event ids on every read, unique well-formed ids, exactly one terminal
  event per turn, at most four attempts per step, nothing after the session ended.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import httpx

REPO = Path(__file__).resolve().parents[2]
TOKEN = "crash-harness-token"
EVENT_ID = re.compile(r"^evt_[0-9A-HJKMNP-TV-Z]{26}$")
TERMINALS = ("turn.completed", "turn.failed", "turn.cancelled")

LEDGER_TOOL = '''
import json
import os
import time

from eve_runtime import ToolContext


def record(label: str, ctx: ToolContext, seconds: float = 0.0) -> dict:
    """Record an effect in the ledger (then wait `seconds`)."""
    line = json.dumps({"callId": ctx.call_id, "label": label, "session": ctx.session_id, "pid": os.getpid()})
    fd = os.open(os.environ["EVE_LEDGER"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    time.sleep(seconds)
    return {"recorded": label}
'''


GUARDED_TOOL = '''
from eve_runtime import ToolContext, tool

from .record import record


@tool(needs_approval=True)
def guarded(label: str, ctx: ToolContext, seconds: float = 0.0) -> dict:
    """Record an effect, once a person approved it."""
    return record(label, ctx, seconds)
'''


def scaffold(root: Path) -> Path:
    """An app from the default template on the `test` model, with the ledger tool."""
    app = root / "app"
    shutil.copytree(REPO / "templates" / "default", app)
    for path in app.rglob("*"):
        if path.is_file() and path.suffix in (".py", ".toml", ".md"):
            text = path.read_text()
            text = text.replace("{{model}}", "test").replace("{{name}}", "crash-app").replace("{{eve_version}}", "0")
            path.write_text(text)
    (app / "agent" / "tools" / "record.py").write_text(LEDGER_TOOL)
    (app / "agent" / "tools" / "guarded.py").write_text(GUARDED_TOOL)
    return app


def eve_command() -> list[str]:
    script = Path(sys.executable).with_name("eve")
    return [str(script)] if script.exists() else [sys.executable, "-m", "eve_cli"]


class EveProcess:
    """One `eve start` process at a time on the app; `kill()` is a real SIGKILL."""

    def __init__(
        self,
        app: Path,
        ledger: Path,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log: Path | None = None,
        command: Sequence[str] | None = None,
    ) -> None:
        """`args` and `env` are added to every start (`--world postgres --database-url ...`, a lease TTL).

        With `log`, every start appends its stderr (the server's log) there, for diagnosing a failure.
        `command` replaces the `eve` command (`python -m cProfile -o FILE -m eve_cli`, say).
        """
        self.command = list(command) if command is not None else None
        self.app = app
        self.log = log
        self.ledger = ledger
        self.args = tuple(args)
        self.env = dict(env or {})
        self.process: subprocess.Popen[str] | None = None
        self.url = ""
        self.starts = 0

    def start(self, crashpoint: str | None = None, *, timeout: float = 30.0) -> str:
        env = {
            **os.environ,
            **self.env,
            "EVE_AUTH_TOKEN": TOKEN,
            "EVE_LEDGER": str(self.ledger),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("EVE_TEST_CRASHPOINT", None)
        if crashpoint:
            env["EVE_TEST_CRASHPOINT"] = crashpoint
        stderr: int | TextIO = subprocess.DEVNULL
        if self.log is not None:
            self.log.parent.mkdir(parents=True, exist_ok=True)  # `crash_soak.py --log DIR` may name a new folder
            stderr = self.log.open("a")
            stderr.write(f"==== start {self.starts + 1} at {time.time():.3f}\n")
            stderr.flush()
        self.process = subprocess.Popen(
            [*(self.command or eve_command()), "start", "--port", "0", *self.args],
            cwd=self.app,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
        if not isinstance(stderr, int):
            stderr.close()  # the child has its own copy
        self.starts += 1
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"eve start exited with {self.process.wait()} before listening")
            match = re.search(r"eve listening on (http://\S+)", line)
            if match:
                self.url = match.group(1)
                return self.url
        raise RuntimeError("eve start did not print its listening line in time")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_dead(self, timeout: float = 10.0) -> bool:
        """Wait for the process to end by itself (a crash point); True when it did."""
        assert self.process is not None
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True

    def kill(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            self._close()
        self.process = None

    def _close(self) -> None:
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()

    def stop(self) -> int:
        """A graceful SIGTERM stop; returns the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=30)
        self._close()
        self.process = None
        return code


@dataclass
class Operation:
    """One client operation, Jepsen style: `ok`, `fail`, or `info` (indeterminate)."""

    kind: str
    session: str | None
    key: str
    outcome: str = "invoke"
    delivery: str | None = None
    status: int | None = None
    request_id: str | None = None
    """For answers: the request they answer."""


@dataclass
class Client:
    """Talks to whichever process is current; records every operation."""

    server: EveProcess
    history: list[Operation] = field(default_factory=list)
    timeout: float = 10.0

    def _http(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.server.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=self.timeout
        )

    def _post(self, op: Operation, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """Record and send one POST; the JSON answer of a 202, else None."""
        self.history.append(op)
        try:
            with self._http() as http:
                response = http.post(path, json=body)
        except httpx.TransportError:
            op.outcome = "info"  # the request may or may not have been accepted
            return None
        op.status = response.status_code
        op.outcome = "ok" if response.status_code == 202 else "fail"
        answer: dict[str, Any] = response.json()
        return answer if op.outcome == "ok" else None

    def create(self, operation_id: str, message: str | None = None) -> Operation:
        body: dict[str, Any] = {"operationId": operation_id}
        if message is not None:
            body["message"] = message
        op = Operation("create", None, operation_id)
        answer = self._post(op, "/eve/v1/session", body)
        if answer is not None:
            op.session = answer["sessionId"]
        return op

    def send(self, session: str, message: str, key: str, *, policy: str = "steer") -> Operation:
        op = Operation("send", session, key)
        body = {"message": message, "idempotencyKey": key, "turnPolicy": policy}
        answer = self._post(op, f"/eve/v1/session/{session}", body)
        if answer is not None:
            op.delivery = answer["deliveryId"]
        return op

    def respond(self, session: str, request_id: str, option: str, key: str) -> Operation:
        op = Operation("respond", session, key, request_id=request_id)
        body = {"inputResponses": [{"requestId": request_id, "optionId": option}], "idempotencyKey": key}
        answer = self._post(op, f"/eve/v1/session/{session}", body)
        if answer is not None:
            op.delivery = answer["deliveryId"]
        return op

    def events(self, session: str) -> list[dict[str, Any]]:
        with self._http() as http:
            response = http.get(f"/eve/v1/session/{session}/stream", params={"follow": "false", "startIndex": "0"})
        response.raise_for_status()
        return [json.loads(line) for line in response.text.splitlines() if line.strip()]

    def tail_index(self, session: str) -> int:
        with self._http() as http:
            response = http.get(f"/eve/v1/session/{session}/stream", params={"follow": "false", "startIndex": "-1"})
        response.raise_for_status()
        return int(response.headers["x-eve-stream-tail-index"])

    def wait_quiet(
        self, session: str, *, turns: int = 1, deliveries: set[str] | None = None, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """Wait until `turns` turns have ended, every delivery in `deliveries` was received, and no turn is open."""
        deadline = time.monotonic() + timeout
        events: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            events = self.events(session)
            started = sum(e["type"] == "turn.started" for e in events)
            ended = sum(e["type"] in TERMINALS for e in events)
            seen = {d for e in events if e["type"] == "message.received" for d in e["meta"]["deliveryIds"]}
            settled = events and events[-1]["type"].startswith("session.") and ended >= started
            if settled and ended >= turns and (deliveries or set()) <= seen:
                return events
            time.sleep(0.05)
        started = sum(e["type"] == "turn.started" for e in events)
        ended = sum(e["type"] in TERMINALS for e in events)
        seen = {d for e in events if e["type"] == "message.received" for d in e["meta"]["deliveryIds"]}
        raise AssertionError(
            f"session {session} did not settle: {[e['type'] for e in events][-12:]}; {started} turn.started, "
            f"{ended} turn ends, deliveries never received: {sorted((deliveries or set()) - seen)}"
        )


@dataclass
class Report:
    """Counters of the invariants (every one but `indeterminate` must be zero)."""

    sessions: int = 0
    turns: int = 0
    events: int = 0
    lost_acked: int = 0
    duplicated_deliveries: int = 0
    reexecuted_calls: int = 0
    executions_without_start: int = 0
    reread_mismatches: int = 0
    bad_ids: int = 0
    duplicate_ids: int = 0
    unterminated_turns: int = 0
    multi_terminal_turns: int = 0
    steps_over_attempts: int = 0
    events_after_end: int = 0
    tail_mismatches: int = 0
    unclosed_calls: int = 0
    """Calls whose start (`actions.requested`) is in the stream but no `action.result` is."""
    multi_closed_calls: int = 0
    """Calls with more than one `action.result`."""
    indeterminate: int = 0
    ledger_lines: int = 0
    rerun_steps: int = 0
    """Steps that started more than once (a kill interrupted them): evidence the kills landed mid-turn."""
    restarted_turns: int = 0
    """Turns with more than one `turn.started`."""
    details: list[str] = field(default_factory=list, repr=False)
    """What each violation looked like (the events concerned), for the report."""

    def violations(self) -> dict[str, int]:
        ignored = {"sessions", "turns", "events", "indeterminate", "ledger_lines", "rerun_steps", "details"}
        return {k: v for k, v in self.__dict__.items() if k not in ignored and v}


def _around(events: list[dict[str, Any]], delivery: str) -> list[str]:
    """The events near each `message.received` of `delivery`: index, type, turn and delivery ids."""
    marks = [
        e["index"] for e in events if e["type"] == "message.received" and delivery in e["meta"].get("deliveryIds", [])
    ]
    return [
        f"{e['index']}:{e['type']}:{e['data'].get('turnId', '')}:{e['meta'].get('deliveryIds', '')}"
        for e in events
        if any(m - 4 <= e["index"] <= m + 2 for m in marks)
    ]


def read_ledger(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def check(client: Client, sessions: list[str], ledger: Path) -> Report:
    """Verify the invariants over every session's durable stream, the client history and the ledger."""
    report = Report(sessions=len(sessions))
    started_calls: set[tuple[str, str]] = set()  # (session, callId): call ids are unique per session only
    for session in sessions:
        events = client.events(session)
        again = client.events(session)
        report.events += len(events)
        ids = [e["meta"]["id"] for e in events]
        if ids != [e["meta"]["id"] for e in again]:
            report.reread_mismatches += 1
        report.bad_ids += sum(1 for i in ids if not EVENT_ID.match(i))
        report.duplicate_ids += len(ids) - len(set(ids))
        if events and client.tail_index(session) != len(events) - 1:
            report.tail_mismatches += 1
        turns: Counter[str] = Counter()
        terminals: Counter[str] = Counter()
        attempts: Counter[tuple[str, int]] = Counter()
        received: Counter[str] = Counter()
        resolved: set[str] = set()
        requested_in: dict[str, int] = {}  # callId -> the step that requested it
        closed: Counter[str] = Counter()  # callId -> its action.result events
        opened: tuple[str, int] | None = None  # the step just started, until its first event
        ended = False
        for event in events:
            data = event["data"]
            if ended:
                report.events_after_end += 1
            kind = event["type"]
            call = data.get("callId") or data.get("result", {}).get("callId")
            if opened is not None and kind != "step.started":
                # A step that opens by going on with a workflow call of an earlier step (or by waiting
                # again on its question) resumes it from its journal after a restart: not an attempt of
                # its own, as no STEP_INTERRUPTED counts it.
                if kind == "turn.waiting" or (call is not None and requested_in.get(call, opened[1]) < opened[1]):
                    attempts[opened] -= 1
                opened = None
            if kind == "turn.started":
                turns[data["turnId"]] += 1
            elif kind in TERMINALS:
                terminals[data["turnId"]] += 1
            elif kind == "step.started":
                attempts[(data["turnId"], data["stepIndex"])] += 1
                opened = (data["turnId"], data["stepIndex"])
            elif kind == "message.received":
                received[event["meta"]["deliveryIds"][-1]] += 1
            elif kind == "input.resolved":
                resolved.update(r["requestId"] for r in data["resolutions"])
            elif kind == "action.result":
                closed[data["result"]["callId"]] += 1
            elif kind == "actions.requested":
                started_calls.update((session, a["callId"]) for a in data["actions"])
                requested_in.update((a["callId"], data["stepIndex"]) for a in data["actions"])
            elif kind in ("session.completed", "session.failed"):
                ended = True
        report.unclosed_calls += sum(1 for c in requested_in if closed[c] == 0)
        report.multi_closed_calls += sum(1 for n in closed.values() if n > 1)
        report.turns += len(turns)
        report.unterminated_turns += sum(1 for t in turns if terminals[t] == 0)
        report.multi_terminal_turns += sum(1 for t in turns if terminals[t] > 1)
        report.steps_over_attempts += sum(1 for n in attempts.values() if n > 4)
        report.rerun_steps += sum(1 for n in attempts.values() if n > 1)
        report.duplicated_deliveries += sum(1 for n in received.values() if n > 1)
        report.restarted_turns += sum(1 for n in turns.values() if n > 1)
        for delivery in (d for d, n in received.items() if n > 1):
            report.details.append(
                f"{session}: delivery {delivery} received more than once: {_around(events, delivery)}"
            )
        for turn in (t for t, n in turns.items() if n > 1):
            starts = [e["index"] for e in events if e["type"] == "turn.started" and e["data"]["turnId"] == turn]
            report.details.append(f"{session}: {turn} started at indexes {starts}")
        sends = [op for op in client.history if op.session == session and op.delivery and op.kind == "send"]
        report.lost_acked += sum(1 for op in sends if received[op.delivery or ""] == 0)
        answers = [op for op in client.history if op.session == session and op.delivery and op.kind == "respond"]
        report.lost_acked += sum(1 for op in answers if op.request_id not in resolved)
    executions = Counter((line["session"], line["callId"]) for line in read_ledger(ledger))
    report.ledger_lines = sum(executions.values())
    report.reexecuted_calls = sum(1 for n in executions.values() if n > 1)
    report.executions_without_start = sum(1 for call in executions if call not in started_calls)
    report.indeterminate = sum(1 for op in client.history if op.outcome == "info")
    return report
