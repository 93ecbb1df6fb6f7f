"""No secret leaves the process: planted in a tool's error, its output and `model_options`, then searched for.

A real `eve start` runs a session whose tools read secrets from the environment (the auth token
and a provider-style key) and put them in an exception text, a returned value and a log line;
the agent's `model_options` carry an `api_key`. Then every file under `.eve/`, the server's log,
every HTTP response body and `eve info` (text and `--json`) are searched for each secret.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from eve_runtime.redaction import MASK
from tests.cli.test_serve import _eve, serving

pytestmark = pytest.mark.scenario

TOKEN = "tok-secret-auth-0123456789abcdef"
PROVIDER_KEY = "sk-acme-provider-key-5555666677778888"
OPTION_KEY = "sk-option-api-key-000011112222"
SECRETS = (TOKEN, PROVIDER_KEY, OPTION_KEY)

AGENT = f'''
from eve_runtime import define_agent

agent = define_agent(model="test", model_options={{"api_key": "{OPTION_KEY}", "temperature": 0.5}})
'''

LEAK = '''
import logging
import os

def leak() -> dict:
    """Returns the environment's secrets, and logs one."""
    logging.getLogger("eve.tools.leak").warning("leaking %s", os.environ["ACME_API_KEY"])
    return {"key": os.environ["ACME_API_KEY"], "token": os.environ["EVE_AUTH_TOKEN"]}
'''

BOOM = '''
import os

def boom() -> str:
    """Fails with the secrets in its message."""
    raise RuntimeError(f"could not connect with key={os.environ['ACME_API_KEY']} token={os.environ['EVE_AUTH_TOKEN']}")
'''


def scaffold(root: Path) -> Path:
    app = root / "secret-agent"
    (app / "agent" / "tools").mkdir(parents=True)
    (app / "agent" / "instructions.md").write_text("Be helpful.\n")
    (app / "agent" / "agent.py").write_text(AGENT)
    (app / "agent" / "tools" / "leak.py").write_text(LEAK)
    (app / "agent" / "tools" / "boom.py").write_text(BOOM)
    return app


def leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [s for s in SECRETS if s.encode() in data]


def test_no_secret_reaches_the_store_the_stream_the_logs_or_info(tmp_path: Path) -> None:
    app = scaffold(tmp_path)
    env = {"EVE_AUTH_TOKEN": TOKEN, "ACME_API_KEY": PROVIDER_KEY}
    bodies: list[bytes] = []
    with serving(app, "start", env=env) as server:
        with httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {TOKEN}"}, timeout=10) as http:
            created = http.post("/eve/v1/session", json={"message": "/call leak {}\n/call boom {}"})
            assert created.status_code == 202, created.text
            bodies.append(created.content)
            session_id = created.json()["sessionId"]
            with http.stream("GET", f"/eve/v1/session/{session_id}/stream") as live:
                for line in live.iter_lines():
                    bodies.append(line.encode())
                    if line and json.loads(line)["type"] == "session.waiting":
                        break
            stream = http.get(f"/eve/v1/session/{session_id}/stream?follow=false")
            info = http.get("/eve/v1/info")
            bodies += [stream.content, info.content]
        server.stop()
    assert server.returncode == 0, server.stderr
    events: list[dict[str, Any]] = [json.loads(line) for line in stream.content.splitlines() if line]
    results = {e["data"]["result"]["toolName"]: e["data"] for e in events if e["type"] == "action.result"}
    assert results["leak"]["result"]["output"] == {"key": MASK, "token": MASK}
    assert results["boom"]["error"]["message"] == f"could not connect with key={MASK} token={MASK}"
    reply = [e for e in events if e["type"] == "message.completed"][-1]["data"]["message"]
    assert MASK in reply and not leaks(reply)  # what the model read was masked too
    assert info.json()["agent"]["model"]["providerOptions"] == {"api_key": MASK, "temperature": 0.5}
    assert f"leaking {MASK}" in server.stderr  # the tool's log line, masked
    for args in (("info", "--json"), ("info",), ("build",)):
        shown = _eve(app, *args, env=env)
        assert shown.returncode == 0, shown.stderr
        assert not leaks(shown.stdout + shown.stderr), args
    assert MASK in _eve(app, "info", "--json", env=env).stdout
    files = [p for p in (app / ".eve").rglob("*") if p.is_file()]
    assert any(p.name == "manifest.json" for p in files) and any("workflow-data" in p.parts for p in files)
    found = {str(p.relative_to(app)): leaks(p.read_bytes()) for p in files}
    assert {path: hit for path, hit in found.items() if hit} == {}
    assert not leaks(server.stderr + server.stdout_rest)
    assert [b for b in bodies if leaks(b)] == []
