"""Provider keys saved in the user's config directory, readable by the user only."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from eve_cli.user_config import apply_provider_keys, config_path, key_variable, load_config, save_provider_key


def test_the_file_lives_in_the_user_config_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "eve" / "config.toml"


def test_keys_are_saved_privately_and_kept_together(tmp_path: Path) -> None:
    path = tmp_path / "eve" / "config.toml"
    old_umask = os.umask(0)
    try:
        save_provider_key("openai", "sk-one", path)
        save_provider_key("anthropic", "sk-two", path)
        save_provider_key("openai", "sk-three", path)
    finally:
        os.umask(old_umask)
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert load_config(path) == {"providers": {"openai": {"api_key": "sk-three"}, "anthropic": {"api_key": "sk-two"}}}
    assert not list(path.parent.glob("*.partial"))


def test_saved_keys_fill_only_unset_variables(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    save_provider_key("openai", "saved", path)
    save_provider_key("together_ai", "saved-too", path)
    environ = {"OPENAI_API_KEY": "from-env"}
    assert apply_provider_keys(environ, path) == ["TOGETHERAI_API_KEY"]
    assert environ == {"OPENAI_API_KEY": "from-env", "TOGETHERAI_API_KEY": "saved-too"}


def test_a_broken_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("providers = [")
    with pytest.raises(ValueError, match="config.toml is not valid TOML"):
        load_config(path)
    assert apply_provider_keys({}, path) == []


def test_key_variables() -> None:
    assert key_variable("anthropic") == "ANTHROPIC_API_KEY"
    assert key_variable("my-gateway") == "MY_GATEWAY_API_KEY"
