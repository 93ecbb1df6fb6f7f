"""Node 24 and eve's TypeScript client (npm `eve` 0.80.1), installed once into a cache outside the repo.

Everything comes from the npm registry (`$EVE_INTEROP_REGISTRY`, default https://registry.npmjs.org):
the Node binary is the registry's `node-linux-<arch>` package, npm itself is the `npm` package
run by that Node, and npm then installs the pinned `eve` and its `ai` peer. Each tarball is
checked against the registry's sha512 integrity. The cache is `$EVE_INTEROP_CACHE`, else the
user cache (`~/.cache/eve-interop` on Linux); a finished install is marked by a stamp naming the
pins, so a second run does nothing.

    python -m tests.interop.node_env     # install (or find) and print the paths
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import io
import json
import os
import platform
import shutil
import subprocess
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["EVE_VERSION", "NodeEnv", "NodeUnavailable", "ensure"]

NODE_VERSION = "24.21.0"
NPM_VERSION = "11.19.1"
EVE_VERSION = "0.80.1"
AI_VERSION = "7.0.173"
"""eve's client needs the `ai` package (a peer dependency); the version the oracle was recorded with."""
_STAMP = f"node-{NODE_VERSION} npm-{NPM_VERSION} eve-{EVE_VERSION} ai-{AI_VERSION}"


class NodeUnavailable(RuntimeError):
    """Node or the eve package could not be installed (no registry, an unsupported machine, ...)."""


@dataclass(frozen=True)
class NodeEnv:
    """Where the installed pieces are."""

    node: Path
    """The `node` binary."""
    modules: Path
    """The `node_modules` holding `eve` (and `ai`)."""


def cache_dir() -> Path:
    """The cache folder (created on demand)."""
    configured = os.environ.get("EVE_INTEROP_CACHE")
    return Path(configured) if configured else Path(platformdirs.user_cache_dir("eve-interop"))


def _registry() -> str:
    return os.environ.get("EVE_INTEROP_REGISTRY", "https://registry.npmjs.org").rstrip("/")


def _platform_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    if arch is None or system is None:
        raise NodeUnavailable(f"no Node package for {sys.platform}/{machine} on the npm registry")
    return f"node-{system}-{arch}"


def _get(url: str, timeout: float = 60.0) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            data: bytes = response.read()
            return data
    except OSError as exc:
        raise NodeUnavailable(f"could not download {url}: {exc}") from exc


def _tarball(name: str, version: str) -> bytes:
    """A package's tarball from the registry, checked against its published sha512 integrity."""
    meta = json.loads(_get(f"{_registry()}/{name}/{version}"))
    dist = meta["dist"]
    data = _get(dist["tarball"], timeout=300.0)
    integrity = str(dist.get("integrity", ""))
    if integrity.startswith("sha512-"):
        digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
        if digest != integrity.removeprefix("sha512-"):
            raise NodeUnavailable(f"{name}@{version}: the tarball does not match its integrity")
    return data


def _unpack(data: bytes, into: Path) -> Path:
    """Unpack an npm tarball (its files are under `package/`); returns the package folder."""
    shutil.rmtree(into, ignore_errors=True)
    into.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(into, filter="data")
    return into / "package"


def _installed(root: Path) -> NodeEnv | None:
    env = NodeEnv(node=root / "node" / "package" / "bin" / "node", modules=root / "client" / "node_modules")
    stamp = root / "installed"
    if stamp.is_file() and stamp.read_text() == _STAMP and env.node.is_file() and (env.modules / "eve").is_dir():
        return env
    return None


def ensure() -> NodeEnv:
    """Find the installed Node and eve client, installing them first if needed.

    Raises:
        NodeUnavailable: with the reason, when they cannot be installed here.
    """
    root = cache_dir()
    found = _installed(root)
    if found is not None:
        return found
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another checkout's tests may be installing at this moment
        return _installed(root) or _install(root)


def _install(root: Path) -> NodeEnv:
    node_package = _unpack(_tarball(_platform_package(), NODE_VERSION), root / "node")
    node = node_package / "bin" / "node"
    node.chmod(0o755)
    npm = _unpack(_tarball("npm", NPM_VERSION), root / "npm") / "bin" / "npm-cli.js"
    client = root / "client"
    client.mkdir(exist_ok=True)
    (client / "package.json").write_text(json.dumps({"name": "eve-interop", "private": True, "type": "module"}))
    env = {**os.environ, "PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [str(node), str(npm), "install", "--no-audit", "--no-fund", "--no-save", "--registry", _registry()]
    command += [f"eve@{EVE_VERSION}", f"ai@{AI_VERSION}"]
    done = subprocess.run(command, cwd=client, env=env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise NodeUnavailable(f"npm install eve@{EVE_VERSION} failed: {done.stderr.strip()[-2000:]}")
    (root / "installed").write_text(_STAMP)
    installed = _installed(root)
    if installed is None:
        raise NodeUnavailable(f"npm finished but {client / 'node_modules' / 'eve'} is missing")
    return installed


if __name__ == "__main__":
    try:
        found = ensure()
    except NodeUnavailable as exc:
        print(f"eve interop: {exc}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"node {found.node}\neve/client {found.modules / 'eve'}")
