"""Schema-driven fuzzing of every route with schemathesis, against our own OpenAPI document.

The document (`eve_runtime.server.openapi`) is loaded as a dict; each operation becomes a pytest test
(schemathesis' pytest integration) that sends a few generated requests, valid and invalid, to a
real uvicorn server on 127.0.0.1 and checks that no answer is a 5xx, that every status code,
content type, header and JSON body is the one documented, and that invalid requests are refused.
Generation is derandomized (the same cases on every run, so CI never flakes on a new find); set
`EVE_FUZZ_RANDOM=1` to explore new cases locally. Generated session ids never exist, so some
cases swap in a real one (parked or ended) to reach the success paths; streams only ever get the
ended session, whose live follow ends by itself.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from typing import Any

import httpx
import jsonschema
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks
from starlette.routing import Route

from eve_runtime.project.compiler import CompiledApp
from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.routes import DEFAULT_ROUTES, SUBAGENT_STREAM
from eve_runtime.server.bodies import MAX_BODY_BYTES
from eve_runtime.server.openapi import Mode, openapi_document
from tests.server.support import LiveServer, harness

RANDOM = os.environ.get("EVE_FUZZ_RANDOM")
SCHEMA = schemathesis.openapi.from_dict(openapi_document(mode="development", max_body_bytes=MAX_BODY_BYTES))


def no_server_error(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> None:
    """Never a 5xx."""
    if response.status_code >= 500:
        raise AssertionError(f"{case.operation.label} answered {response.status_code}: {response.text[:300]}")


CHECKS = [
    no_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
    checks.response_headers_conformance,
    checks.negative_data_rejection,
]


class FuzzTarget:
    """The live server, a parked session and an ended one."""

    def __init__(self, server: LiveServer, parked: str, ended: str) -> None:
        self.server = server
        self.parked = parked
        self.ended = ended
        self.turns = itertools.count()


@pytest.fixture(scope="module")
def target(compiled_app: CompiledApp) -> Iterator[FuzzTarget]:
    assert compiled_app.root is not None
    with LiveServer(compiled_app.root, compiled_app.manifest) as server, httpx.Client(base_url=server.url) as http:
        parked = http.post("/eve/v1/session").json()["sessionId"]
        ended = http.post("/eve/v1/session", json={"message": "hi"}).json()["sessionId"]
        assert http.post(f"/eve/v1/session/{ended}/reset").json()["status"] == "reset"
        yield FuzzTarget(server, parked, ended)


@SCHEMA.parametrize()
@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
    derandomize=RANDOM is None,  # the same cases on every CI run; EVE_FUZZ_RANDOM=1 explores new ones
)
def test_api_conforms(case: schemathesis.Case[Any], target: FuzzTarget) -> None:
    if case.path_parameters and "sessionId" in case.path_parameters:
        choice = next(target.turns) % 3  # 0: as generated (unknown), 1: parked, 2: ended
        streaming = case.operation.path.endswith("/stream")
        if choice == 1:
            case.path_parameters["sessionId"] = target.ended if streaming else target.parked
        elif choice == 2:
            case.path_parameters["sessionId"] = target.ended
    case.call_and_validate(base_url=target.server.url, checks=CHECKS, timeout=10)


@pytest.mark.parametrize("mode", ["development", "production"])
def test_the_document_describes_exactly_the_served_routes(mode: Mode, agent: RuntimeAgent, manifest: Manifest) -> None:
    document = openapi_document(mode=mode, max_body_bytes=MAX_BODY_BYTES)
    for schema in document["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)
    documented = {(path, method.upper()) for path, item in document["paths"].items() for method in item}
    with harness(agent, manifest, mode=mode) as api:
        served = {
            (route.path.replace(":path}", "}"), method)  # a nested schedule name holds a '/'
            for route in api.app.routes
            if isinstance(route, Route) and route.methods is not None and route.include_in_schema
            for method in route.methods
        }
    assert documented == served
    inspector = {route.path for route in api.app.routes if isinstance(route, Route) and not route.include_in_schema}
    page = {"/", "/inspector/{name}"} if mode == "development" else set()  # the web inspector: a page, not the API
    assert inspector == page
    dev_routes = {"/eve/v1/dev/sessions", "/eve/v1/dev/build", "/eve/v1/dev/schedules/:scheduleId"}
    dev_only = dev_routes if mode == "development" else set()
    extra = {
        "/eve/v1/openapi.json",
        SUBAGENT_STREAM.path,
        "/eve/v1/connections/:name/token",
        "/eve/v1/connections/:name/callback",
    }
    assert {route.path for route in DEFAULT_ROUTES} | extra | dev_only == {
        re.sub(r"\{(\w+)\}", r":\1", path) for path, _method in documented
    }
    health = document["paths"]["/eve/v1/health"]["get"]
    assert (health.get("security") == []) == (mode == "production")
