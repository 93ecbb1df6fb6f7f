"""The README's first command: an example agent end to end on the offline `test` model.

1. `eve init` scaffolds an app (the default template: a `get_weather` tool) in `.eve/demo`.
2. `eve start` serves it on 127.0.0.1 (a free port) with a token.
3. A session is created with a message that makes the model call the tool; the NDJSON event
   stream is followed to `session.waiting` and the reply printed.
4. Durability: a slow turn is killed mid-stream with SIGKILL, the server is started again, and
   the same turn finishes (same turn id, the interrupted step run again).
5. A person in the loop: `send_alert` needs approval; the turn parks, survives another SIGKILL,
   and the approval sent after the restart runs the tool once.
6. A subagent: the `forecaster` subagent works in a child session of its own; its reply
   settles the task.
7. A skill and the sandbox: the model loads the `plan_a_day` skill, then runs `bash` in the
   session's sandbox (bubblewrap where it runs) to write a file in `/workspace`; the file
   survives another SIGKILL and `read_file` reads it back after the restart.

Run: `make demo` (or `.venv/bin/python scripts/demo.py`).
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
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / ".eve" / "demo"
TOKEN = "demo-token-0123456789abcdef"
EVE = [str(Path(sys.executable).with_name("eve"))]


def start_server() -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "EVE_AUTH_TOKEN": TOKEN}
    process = subprocess.Popen(
        [*EVE, "start", "--port", "0"], cwd=DEMO, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    match = re.search(r"eve listening on (http://\S+)", line)
    if match is None:
        process.kill()
        raise SystemExit(f"eve start did not start: {line!r}")
    print(f"  {line.strip()}")
    return process, match.group(1)


def events(client: httpx.Client, session: str) -> list[dict[str, Any]]:
    response = client.get(f"/eve/v1/session/{session}/stream", params={"follow": "false"})
    response.raise_for_status()
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def follow_to_reply(client: httpx.Client, session: str, start: int = 0) -> list[dict[str, Any]]:
    """Follow the live stream from `start` until the turn ends; print each event as it arrives."""
    seen: list[dict[str, Any]] = []
    with client.stream("GET", f"/eve/v1/session/{session}/stream", params={"startIndex": str(start)}) as stream:
        for line in stream.iter_lines():
            if not line.strip():
                continue
            event = json.loads(line)
            seen.append(event)
            data = event["data"]
            detail = data.get("messageDelta") or data.get("message") or data.get("actions") or ""
            print(f"    {event['type']:<22} {json.dumps(detail)[:70] if detail else ''}")
            if event["type"] in ("session.waiting", "session.completed", "session.failed"):
                break
    return seen


def wait_for(client: httpx.Client, session: str, event_type: str, start: int) -> dict[str, Any]:
    """Poll the stream (a bounded read) until an event of this type appears after `start`."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [e for e in events(client, session)[start:] if e["type"] == event_type]
        if found:
            return found[0]
        time.sleep(0.1)
    raise SystemExit(f"no {event_type} within 30 s")


def restart(server: subprocess.Popen[str]) -> tuple[subprocess.Popen[str], str]:
    """kill -9 the server's process group, then start it again."""
    os.killpg(server.pid, signal.SIGKILL)
    server.wait()
    print("   kill -9, then eve start again:")
    return start_server()


def call(client: httpx.Client, session: str, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Make the `test` model call a tool, and follow the turn to its end."""
    before = len(events(client, session))
    client.post(f"/eve/v1/session/{session}", json={"message": f"/call {tool} {json.dumps(arguments)}"})
    return follow_to_reply(client, session, before)


def reply(seen: list[dict[str, Any]]) -> str:
    done = [e for e in seen if e["type"] == "message.completed" and e["data"]["finishReason"] != "tool-calls"]
    return str(done[-1]["data"]["message"]) if done else ""


def main() -> None:
    shutil.rmtree(DEMO, ignore_errors=True)
    print("1. eve init .eve/demo --model test")
    subprocess.run([*EVE, "init", str(DEMO), "--model", "test", "-n"], check=True, stdout=subprocess.DEVNULL)
    print("2. eve start (a real server on 127.0.0.1)")
    server, url = start_server()
    headers = {"authorization": f"Bearer {TOKEN}"}
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
            message = '/call get_weather {"city": "Paris"}'
            print(f"3. POST /eve/v1/session {{'message': {message!r}}}, then follow the stream:")
            session = client.post("/eve/v1/session", json={"message": message}).json()["sessionId"]
            seen = follow_to_reply(client, session)
            print(f"   reply: {reply(seen)}")

            print("4. Durability: a slow turn, killed with SIGKILL mid-stream, then a restart")
            slow = "/delay 150\n/reply " + " ".join(["the", "turn", "survives", "a", "kill", "-9"] * 3)
            before = len(events(client, session))
            client.post(f"/eve/v1/session/{session}", json={"message": slow})
            time.sleep(1.0)
            partial = [e for e in events(client, session)[before:] if e["type"] == "message.appended"]
            print(f"   {len(partial)} text deltas streamed")
            server, url = restart(server)
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            seen = follow_to_reply(client, session, before)
            turns = {e["data"]["turnId"] for e in seen if "turnId" in e["data"]}
            steps = [e["data"]["stepIndex"] for e in seen if e["type"] == "step.started"]
            print(
                f"   the same turn finished ({', '.join(sorted(turns))}; step.started indexes {steps}): {reply(seen)}"
            )

            print("5. A person in the loop: send_alert needs an approval")
            alert = '/call send_alert {"city": "Paris", "message": "Storm tonight"}'
            before = len(events(client, session))
            client.post(f"/eve/v1/session/{session}", json={"message": alert})
            request = wait_for(client, session, "input.requested", before)["data"]["requests"][0]
            wait_for(client, session, "turn.waiting", before)
            print(f"   input.requested {request['requestId']} ({request['kind']}); the turn waits, no process holds it")
            server, url = restart(server)
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            answer = {"inputResponses": [{"requestId": request["requestId"], "optionId": "approve"}]}
            print("   POST {'inputResponses': [{... 'optionId': 'approve'}]}:")
            client.post(f"/eve/v1/session/{session}", json=answer).raise_for_status()
            seen = follow_to_reply(client, session, before)
            runs = [e for e in seen if e["type"] == "action.result" and e["data"]["result"]["toolName"] == "send_alert"]
            print(f"   send_alert ran {len(runs)} time(s) after the restart: {reply(seen)}")

            print("6. A subagent: forecaster works in a child session of its own")
            before = len(events(client, session))
            delegate = '/call forecaster {"message": "/reply Sunny, then rain, then sun."}'
            client.post(f"/eve/v1/session/{session}", json={"message": delegate})
            seen = follow_to_reply(client, session, before)
            child = next(e["data"] for e in seen if e["type"] == "agent.started")
            settled = next(e["data"] for e in seen if e["type"] == "task.settled")
            print(f"   child session {child['sessionId']} ({child['streamPath']}) replied: {settled['output']}")

            print("7. A skill and the sandbox")
            seen = call(client, session, "load_skill", {"skill": "plan_a_day"})
            loaded = next(e["data"]["result"] for e in seen if e["type"] == "action.result")
            print(f"   load_skill ({loaded['kind']}, {loaded['name']}): {str(loaded['output']).splitlines()[0]}")
            command = "echo 'umbrella, boots' > /workspace/packing.txt && wc -c < /workspace/packing.txt"
            seen = call(client, session, "bash", {"command": command})
            ran = next(e["data"]["result"]["output"] for e in seen if e["type"] == "action.result")
            print(f"   bash {command!r}: exit {ran['exitCode']}, stdout {ran['stdout'].strip()!r}")
            server, url = restart(server)
        with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
            seen = call(client, session, "read_file", {"filePath": "/workspace/packing.txt"})
            read = next(e["data"]["result"]["output"] for e in seen if e["type"] == "action.result")
            print(f"   read_file after the restart: {read['content'].strip()!r}")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print(f"Done. The app is in {DEMO}; its sessions are in {DEMO / '.eve' / 'workflow-data'}.")


if __name__ == "__main__":
    main()
