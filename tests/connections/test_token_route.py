"""`POST /eve/v1/connections/{name}/token` through the HTTP API: bad bodies, unknown names, and resuming a turn."""

from __future__ import annotations

import json
from pathlib import Path

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
