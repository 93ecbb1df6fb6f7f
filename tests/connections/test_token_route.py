"""`POST /eve/v1/connections/{name}/token` through the HTTP API: bad bodies, unknown names, and resuming a turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eve_runtime.project.compiler import compile_app
from tests.connections.servers import McpHttpServer
from tests.helpers import minimal_app
from tests.server.support import harness


def test_a_supplied_token_resumes_the_parked_call(tmp_path: Path, mcp_http_token: McpHttpServer) -> None:
    connection = (
        "from eve_runtime import connection_auth, define_mcp_client_connection\n\n"
        f"web = define_mcp_client_connection(url={mcp_http_token.url!r}, description='Docs.',\n"
        "    auth=connection_auth(credential_owner='user'))\n"
    )
    app = compile_app(minimal_app(tmp_path, {"agent/connections/web.py": connection}), write=False)
    assert app.root is not None, [d.message for d in app.diagnostics]
    with harness(app.root, app.manifest) as h:
        client = h.client
        assert client.post("/eve/v1/connections/nope/token", json={"token": "x"}).status_code == 404
        for body in ({}, {"token": ""}, {"token": 3}, {"token": "x", "sessionId": "only-one"}):
            response = client.post("/eve/v1/connections/web/token", json=body)
            assert response.status_code == 400 and response.json()["ok"] is False, body
        session = h.create('/call web__echo {"text": "signed in"}')
        events = h.wait_for(session, "authorization.required")
        (required,) = [e for e in events if e["type"] == "authorization.required"]
        assert "/eve/v1/connections/web/token" in required["data"]["authorization"]["instructions"]
        body = {"token": "s3cret-token", "sessionId": session, "requestId": required["data"]["attemptId"]}
        if required["data"].get("principalId"):
            body["principalId"] = required["data"]["principalId"]
        answer = client.post("/eve/v1/connections/web/token", json=body)
        assert answer.status_code == 200 and answer.json()["deliveryId"], answer.text
        assert "s3cret-token" not in answer.text
        events = h.wait_for(session, "session.waiting")
        results = [e for e in events if e["type"] == "action.result"]
        assert results[-1]["data"]["status"] == "completed", results
        assert "echo: signed in" in json.dumps(results[-1])
        assert "s3cret-token" not in json.dumps(events)


PEOPLE = """
from eve_runtime.authoring.channels import Principal, eve_channel

NAMES = {"Bearer alice-0123456789abcdef": "alice", "Bearer bob-0123456789abcdef": "bob"}


def people(request):
    name = NAMES.get(request.headers.get("authorization", ""))
    return Principal(name, "user", "people") if name else None


channel = eve_channel(auth=[people])
"""


def test_a_users_token_belongs_to_the_caller_who_supplied_it(tmp_path: Path, mcp_http_token: McpHttpServer) -> None:
    connection = (
        "from eve_runtime import connection_auth, define_mcp_client_connection\n\n"
        f"web = define_mcp_client_connection(url={mcp_http_token.url!r}, description='Docs.',\n"
        "    auth=connection_auth(credential_owner='user'))\n"
    )
    files = {"agent/connections/web.py": connection, "agent/channels/eve.py": PEOPLE}
    app = compile_app(minimal_app(tmp_path, files), write=False)
    assert app.root is not None, [d.message for d in app.diagnostics]
    alice = {"authorization": "Bearer alice-0123456789abcdef"}
    bob = {"authorization": "Bearer bob-0123456789abcdef"}
    with harness(app.root, app.manifest) as h:
        client = h.client

        def sign_in_of(headers: dict[str, str]) -> tuple[str, dict[str, Any]]:
            client.headers.update(headers)
            session = h.create('/call web__echo {"text": "hi"}')
            events = h.wait_for(session, "authorization.required")
            return session, next(e for e in events if e["type"] == "authorization.required")["data"]

        session, required = sign_in_of(alice)
        assert required["principalId"] == "alice"  # the turn runs as its caller
        body = {"token": "s3cret-token", "sessionId": session, "requestId": required["attemptId"]}
        assert client.post("/eve/v1/connections/web/token", json=body, headers=alice).status_code == 200
        results = [e for e in h.wait_for(session, "session.waiting") if e["type"] == "action.result"]
        assert results[-1]["data"]["status"] == "completed"

        session, required = sign_in_of(bob)  # alice's token is hers: bob signs in too
        assert required["principalId"] == "bob"
        body = {"token": "s3cret-token", "principalId": "alice"}
        refused = client.post("/eve/v1/connections/web/token", json=body, headers=bob)
        assert refused.status_code == 403 and refused.json()["code"] == "forbidden"
        body = {"token": "s3cret-token", "sessionId": session, "requestId": required["attemptId"]}
        assert client.post("/eve/v1/connections/web/token", json=body, headers=bob).status_code == 200
        events = h.wait_for(session, "session.waiting")
        (completed,) = [e for e in events if e["type"] == "authorization.completed"]
        assert completed["data"]["principalId"] == "bob" and completed["data"]["outcome"] == "authorized"
