"""The user's eve settings, kept outside every project: provider keys saved by the terminal UI's `/model`.

The file is `config.toml` in the user config directory (platformdirs: `~/.config/eve/` on Linux,
`$XDG_CONFIG_HOME/eve/` when that is set), written with tomli-w and readable by its owner only
(mode 0600, in a 0700 directory). `eve dev` puts each saved key into the environment under the
variable litellm reads (`OPENAI_API_KEY`, ...) unless the environment or the app's `.env` already
sets it. Keys never reach the logs, the event stream or the store.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

__all__ = ["apply_provider_keys", "config_path", "key_variable", "load_config", "save_provider_key"]

_KEY_VARIABLES_UNLIKE_THEIR_PROVIDER = {"perplexity": "PERPLEXITYAI_API_KEY", "together_ai": "TOGETHERAI_API_KEY"}
"""Where litellm's variable is not `<PROVIDER>_API_KEY`."""


def config_path() -> Path:
    """Where the user's eve settings live."""
    from platformdirs import user_config_dir

    return Path(user_config_dir("eve", appauthor=False)) / "config.toml"


def key_variable(provider: str) -> str:
    """The environment variable litellm reads a provider's key from (`openai` -> `OPENAI_API_KEY`)."""
    from eve_runtime.models.providers import PROVIDER_DEFAULTS

    for entry in PROVIDER_DEFAULTS:
        if entry.model_id.split("/", 1)[0] == provider:
            return entry.env_var
    return _KEY_VARIABLES_UNLIKE_THEIR_PROVIDER.get(provider, provider.upper().replace("-", "_") + "_API_KEY")


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The settings (empty when there is no file yet)."""
    path = path or config_path()
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except FileNotFoundError:
        return {}
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML ({exc}): fix it or delete it, then try again") from None


def save_provider_key(provider: str, key: str, path: Path | None = None) -> Path:
    """Save `key` for `provider` (kept with the other settings); return the file's path."""
    import tomli_w

    path = path or config_path()
    settings = load_config(path)
    providers = settings.setdefault("providers", {})
    providers.setdefault(provider, {})["api_key"] = key
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        tomli_w.dump(settings, file)
        file.flush()
        os.fsync(file.fileno())
    os.chmod(partial, 0o600)  # the umask cannot widen it, and an older file's mode does not carry over
    os.replace(partial, path)
    return path


def apply_provider_keys(environ: MutableMapping[str, str] | None = None, path: Path | None = None) -> list[str]:
    """Put the saved keys into the environment where it has none; return the variables set."""
    environ = os.environ if environ is None else environ
    try:
        providers = load_config(path).get("providers")
    except ValueError:
        return []
    applied = []
    for provider, entry in (providers if isinstance(providers, dict) else {}).items():
        key = entry.get("api_key") if isinstance(entry, dict) else None
        variable = key_variable(str(provider))
        if isinstance(key, str) and key and not environ.get(variable):
            environ[variable] = key
            applied.append(variable)
    return applied
