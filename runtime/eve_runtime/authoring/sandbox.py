"""`define_sandbox`: the agent's one sandbox (`agent/sandbox.py` or `agent/sandbox/sandbox.py`).

Every agent has a sandbox rooted at `/workspace`, created for a session the first time a tool
asks for it (`await ctx.get_sandbox()`, or the built-in `bash`, `read_file`, `write_file`,
`glob` and `grep`). Without a sandbox file the defaults apply: the best backend this machine
has, no network, a 120 s limit per command.

```python
# agent/sandbox.py
from eve_runtime import define_sandbox

sandbox = define_sandbox(
    backend="bwrap",                          # "auto" (default), "bwrap", "local", or your own backend
    bootstrap=["python3 -m venv .venv"],      # run once in each new workspace, in order
    environment={"PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    network="deny-all",                       # "deny-all" (default), "allow-all", or {"allow": [...]}
    timeout_seconds=120,
    max_output_bytes=1_000_000,
)
```

The folder form `agent/sandbox/sandbox.py` adds `agent/sandbox/workspace/**`, copied into every
new workspace. A subagent whose `sandbox.py` holds `define_parent_sandbox()` uses the sandbox of
the session that delegated to it.

`network`: sandbox commands get the network only under `"allow-all"` (bubblewrap cannot filter
by host). `{"allow": ["127.0.0.1", "10.0.0.0/8", "intranet.example"]}` keeps commands offline
and lets `web_fetch` reach those private or loopback hosts, which it refuses otherwise.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from eve_runtime.authoring.sandbox_session import SandboxBackend
from eve_runtime.authoring.validation import Problems
from eve_runtime.errors import DefinitionError

__all__ = [
    "BACKEND_NAMES",
    "NetworkPolicy",
    "ParentSandbox",
    "SandboxConfig",
    "define_parent_sandbox",
    "define_sandbox",
    "is_public",
]

BACKEND_NAMES = ("auto", "bwrap", "local")
"""The backends named by a string; `auto` is bubblewrap where it runs, else `local`."""


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4, Teredo's client, IPv4-compatible), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in network for network in _NAT64) or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_public(address: str) -> bool:
    """Whether an address is a public unicast one (and so is any IPv4 address it carries)."""
    ip = ipaddress.ip_address(address)
    if not ip.is_global or ip.is_multicast:
        return False
    inner = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return inner is None or (inner.is_global and not inner.is_multicast)


@dataclass(frozen=True)
class NetworkPolicy:
    """Who may reach what: sandbox commands (all or nothing) and `web_fetch` (private hosts by name)."""

    mode: Literal["deny-all", "allow-all", "allow-list"] = "deny-all"
    allow: tuple[str, ...] = ()
    """Hosts, IP addresses or CIDR ranges `web_fetch` may reach although they are private or loopback."""

    @property
    def commands_online(self) -> bool:
        """Whether sandbox commands get the network."""
        return self.mode == "allow-all"

    def permits_private(self, host: str, address: str) -> bool:
        """Whether `web_fetch` may reach `address` (private, loopback, ...) named by `host`."""
        if self.mode == "allow-all":
            return True
        ip = ipaddress.ip_address(address)
        for entry in self.allow:
            if entry.lower() == host.lower():
                return True
            try:
                if ip in ipaddress.ip_network(entry, strict=False):
                    return True
            except ValueError:
                continue
        return False

    def describe(self) -> str:
        if self.mode == "allow-list":
            return "allow " + ", ".join(self.allow)
        return self.mode


@dataclass(frozen=True)
class SandboxConfig:
    """What `define_sandbox` returns."""

    backend: str | SandboxBackend = "auto"
    bootstrap: tuple[str, ...] = ()
    environment: Mapping[str, str] = field(default_factory=dict)
    network: NetworkPolicy = field(default_factory=NetworkPolicy)
    timeout_seconds: float = 120.0
    max_output_bytes: int = 1024 * 1024
    description: str | None = None

    @property
    def backend_kind(self) -> str:
        """The backend's name (`auto`, `bwrap`, `local`, or a custom backend's `name`)."""
        return self.backend if isinstance(self.backend, str) else str(self.backend.name)


@dataclass(frozen=True)
class ParentSandbox:
    """What `define_parent_sandbox` returns: this subagent uses the sandbox of the session that delegated to it."""


def define_parent_sandbox() -> ParentSandbox:
    """Share the parent's sandbox (`agent/subagents/<name>/sandbox.py`): same files, same backend, same limits."""
    return ParentSandbox()


def define_sandbox(
    *,
    backend: str | SandboxBackend = "auto",
    bootstrap: Sequence[str] | None = None,
    environment: Mapping[str, str] | None = None,
    network: str | Mapping[str, Sequence[str]] = "deny-all",
    timeout_seconds: float = 120.0,
    max_output_bytes: int = 1024 * 1024,
    description: str | None = None,
) -> SandboxConfig:
    """Define the agent's sandbox.

    Args:
        backend: `auto` (bubblewrap where it runs, else `local`), `bwrap`, `local` (a plain
            subprocess: no isolation), or an object implementing `SandboxBackend`.
        bootstrap: Shell commands run once, in order, in each new workspace (after the seed is
            copied); a failing one fails the first sandbox access with its output.
        environment: Variables every command gets (nothing else of the server's environment
            reaches the sandbox besides `PATH`, `HOME` and `LANG`).
        network: `deny-all` (default), `allow-all`, or `{"allow": [hosts or CIDRs]}` (see the module).
        timeout_seconds: How long one command may run before it is killed with everything it started.
        max_output_bytes: Bytes of stdout and of stderr one command keeps (the end of each).
        description: Shown in `eve info`.
    """
    problems = Problems()
    if isinstance(backend, str):
        if backend not in BACKEND_NAMES:
            problems.add(
                "backend",
                f"define_sandbox(): unknown backend {backend!r}; use one of {', '.join(BACKEND_NAMES)} "
                "or an object implementing SandboxBackend",
            )
    else:
        problems.when(
            not isinstance(backend, SandboxBackend),
            "backend",
            "define_sandbox(): 'backend' must be a name or an object with name, isolated, unavailable() and run()",
        )
    commands = tuple(bootstrap or ())
    problems.when(
        isinstance(bootstrap, str) or not all(isinstance(c, str) and c.strip() for c in commands),
        "bootstrap",
        "define_sandbox(): 'bootstrap' must be a list of shell commands",
    )
    env = dict(environment or {})
    problems.when(
        not all(isinstance(k, str) and k and "=" not in k and isinstance(v, str) for k, v in env.items()),
        "environment",
        "define_sandbox(): 'environment' must map variable names to strings",
    )
    policy = NetworkPolicy()
    try:
        policy = _network(network)
    except DefinitionError as exc:
        problems.found.extend(exc.problems)
    problems.when(
        not _positive(timeout_seconds), "timeout_seconds", "define_sandbox(): 'timeout_seconds' must be a number > 0"
    )
    problems.when(
        isinstance(max_output_bytes, bool) or not isinstance(max_output_bytes, int) or max_output_bytes < 1024,
        "max_output_bytes",
        "define_sandbox(): 'max_output_bytes' must be an integer >= 1024",
    )
    problems.when(
        description is not None and not isinstance(description, str),
        "description",
        "define_sandbox(): 'description' must be a string",
    )
    problems.raise_any()
    return SandboxConfig(
        backend=backend,
        bootstrap=commands,
        environment=env,
        network=policy,
        timeout_seconds=float(timeout_seconds),
        max_output_bytes=max_output_bytes,
        description=description,
    )


def _positive(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and value > 0


def _network(value: Any) -> NetworkPolicy:
    if value in ("deny-all", "allow-all"):
        return NetworkPolicy(mode=value)
    if isinstance(value, Mapping) and set(value) == {"allow"}:
        allow = value["allow"]
        if not isinstance(allow, str) and isinstance(allow, Sequence) and all(isinstance(a, str) and a for a in allow):
            return NetworkPolicy(mode="allow-list", allow=tuple(allow))
    raise DefinitionError(
        'define_sandbox(): \'network\' must be "deny-all", "allow-all" or {"allow": ["host", "10.0.0.0/8", ...]}',
        field="network",
    )
