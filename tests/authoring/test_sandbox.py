"""`define_sandbox` and `define_parent_sandbox`: what they accept, and the errors that name the field."""

from __future__ import annotations

from typing import Any

import pytest

from eve_runtime import ParentSandbox, SandboxConfig, define_parent_sandbox, define_sandbox
from eve_runtime.authoring.sandbox import NetworkPolicy
from eve_runtime.errors import DefinitionError


def test_defaults() -> None:
    config = define_sandbox()
    assert config == SandboxConfig()
    assert (config.backend, config.network.mode, config.timeout_seconds) == ("auto", "deny-all", 120.0)
    assert not config.network.commands_online
    assert isinstance(define_parent_sandbox(), ParentSandbox)


def test_network_policies() -> None:
    assert define_sandbox(network="allow-all").network.commands_online
    listed = define_sandbox(network={"allow": ["127.0.0.1", "10.0.0.0/8", "intranet"]}).network
    assert listed == NetworkPolicy("allow-list", ("127.0.0.1", "10.0.0.0/8", "intranet"))
    assert not listed.commands_online  # bubblewrap cannot filter by host: commands stay offline
    assert listed.permits_private("127.0.0.1", "127.0.0.1")
    assert listed.permits_private("db.internal", "10.3.2.1")
    assert listed.permits_private("intranet", "192.168.1.1")
    assert not listed.permits_private("other", "192.168.1.1")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"backend": "podman"}, "backend"),
        ({"backend": object()}, "backend"),
        ({"bootstrap": "make"}, "bootstrap"),
        ({"bootstrap": [""]}, "bootstrap"),
        ({"environment": {"A=B": "x"}}, "environment"),
        ({"environment": {"A": 1}}, "environment"),
        ({"network": "some"}, "network"),
        ({"network": {"allow": "127.0.0.1"}}, "network"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"timeout_seconds": True}, "timeout_seconds"),
        ({"max_output_bytes": 10}, "max_output_bytes"),
        ({"description": 3}, "description"),
    ],
)
def test_bad_arguments_name_their_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(DefinitionError) as raised:
        define_sandbox(**kwargs)
    assert raised.value.field == field


def test_a_custom_backend_is_accepted() -> None:
    class Mine:
        name = "mine"
        isolated = True

        def unavailable(self) -> str | None:
            return None

        async def run(self, layout: Any, request: Any) -> Any:
            raise NotImplementedError

    assert define_sandbox(backend=Mine()).backend_kind == "mine"
