"""The web inspector's files: served at `/` by `eve dev`, by `eve start` only with `--inspector`.

The browser scenarios are in `tests/server/inspector/`; these check the HTTP answers: the
Content-Security-Policy, the loopback rules, the bearer token under `eve start --inspector`, and
that the page's own code never parses content as HTML.
"""

from __future__ import annotations

import re

import pytest

from eve_runtime.project.manifest import Manifest
from eve_runtime.project.runtime_agent import RuntimeAgent
from eve_runtime.server.auth import BearerTokenAuth, LoopbackAuth
from eve_runtime.server.inspector import CONTENT_SECURITY_POLICY, INSPECTOR_FILES
from tests.server.support import Harness, harness

TOKEN = "inspector-token-0123456789"
MODULES = sorted(path.name for path in INSPECTOR_FILES.glob("*.js"))


def test_eve_dev_serves_the_page_at_the_root_with_a_strict_policy(api: Harness) -> None:
    response = api.client.get("/")
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    policy = response.headers["content-security-policy"]
    assert policy == CONTENT_SECURITY_POLICY
    for directive in ("script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "default-src 'none'"):
        assert directive in policy
    assert "unsafe" not in policy
    assert response.headers["x-content-type-options"] == "nosniff"
    assert '<script type="module" src="/inspector/app.js"></script>' in response.text


@pytest.mark.parametrize("name", [*MODULES, "inspector.css"])
def test_every_file_the_page_loads_is_served(api: Harness, name: str) -> None:
    response = api.client.get(f"/inspector/{name}")
    assert response.status_code == 200
    expected = "text/javascript" if name.endswith(".js") else "text/css"
    assert response.headers["content-type"].startswith(expected)
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_every_module_the_page_imports_exists() -> None:
    imported = set()
    for name in MODULES:
        imported |= set(re.findall(r'from "\./([a-z]+\.js)"', (INSPECTOR_FILES / name).read_text()))
    assert imported <= set(MODULES)
    assert set(MODULES) - imported == {"app.js"}  # the entry point, loaded by index.html


@pytest.mark.parametrize("path", ["/inspector/nope.js", "/inspector/..%2Fapp.py", "/inspector/%2E%2E%2Fauth.py"])
def test_nothing_outside_the_folder_is_served(api: Harness, path: str) -> None:
    response = api.client.get(path)
    assert response.status_code == 404
    assert response.json()["ok"] is False


def test_the_page_never_parses_content_as_html() -> None:
    """No inline script or handler in the page; no HTML parsing, eval or document.write in its modules."""
    page = (INSPECTOR_FILES / "index.html").read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)", page) == []
    assert re.search(r"\son[a-z]+\s*=", page) is None
    for name in MODULES:
        code = (INSPECTOR_FILES / name).read_text()
        for banned in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert banned not in code, f"{name} uses {banned}"


@pytest.mark.parametrize(
    ("client", "base_url", "headers", "code"),
    [
        (("203.0.113.7", 1), "http://127.0.0.1:2000", {}, "forbidden"),
        (("127.0.0.1", 1), "http://evil.example:2000", {}, "forbidden_host"),
        (("127.0.0.1", 1), "http://127.0.0.1:2000", {"origin": "http://evil.example"}, "forbidden_origin"),
    ],
)
def test_the_files_follow_the_loopback_rules(
    agent: RuntimeAgent, manifest: Manifest, client: tuple[str, int], base_url: str, headers: dict[str, str], code: str
) -> None:
    with harness(agent, manifest, auth=LoopbackAuth(), client=client, base_url=base_url) as h:
        for path in ("/", "/inspector/app.js"):
            response = h.client.get(path, headers=headers)
            assert response.status_code == 403
            assert response.json()["code"] == code


def test_eve_start_serves_no_inspector_without_the_flag(agent: RuntimeAgent, manifest: Manifest) -> None:
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth(TOKEN)) as h:
        bearer = {"authorization": f"Bearer {TOKEN}"}
        assert h.client.get("/").status_code == 404
        assert h.client.get("/inspector/app.js").status_code == 404
        assert h.client.get("/eve/v1/dev/sessions", headers=bearer).status_code == 404


def test_eve_start_inspector_serves_the_shell_and_puts_the_data_behind_the_token(
    agent: RuntimeAgent, manifest: Manifest
) -> None:
    with harness(agent, manifest, mode="production", auth=BearerTokenAuth(TOKEN), inspector=True) as h:
        shell = h.client.get("/")
        assert shell.status_code == 200
        assert TOKEN not in shell.text
        assert h.client.get("/inspector/app.js").status_code == 200
        for path in ("/eve/v1/dev/sessions", "/eve/v1/dev/build", "/eve/v1/info"):
            refused = h.client.get(path)
            assert refused.status_code == 401, path
            assert refused.headers["www-authenticate"] == "Bearer"
            assert h.client.get(path, headers={"authorization": "Bearer wrong-token-0123456789"}).status_code == 401
            assert h.client.get(path, headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200, path
        # firing schedules stays an `eve dev` route
        assert h.client.post("/eve/v1/dev/schedules/x", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 404


def test_the_page_keeps_the_token_out_of_urls_and_logs() -> None:
    api = (INSPECTOR_FILES / "api.js").read_text()
    assert "sessionStorage" in api and "localStorage" not in api
    for name in MODULES:
        code = (INSPECTOR_FILES / name).read_text()
        assert "console." not in code, name
        assert not re.search(r"[?&]token=", code), name
