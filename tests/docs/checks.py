"""Checks of one documented command against the code: the CLI's commands and flags, the Makefile's
targets, and the server's routes."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import typer
from starlette.routing import BaseRoute, Match
from typer.testing import CliRunner

from eve_cli.main import app
from tests.docs.shell import Command

__all__ = ["CurlRequest", "check_eve", "check_make", "curl_request", "route_matches"]

ROOT = Path(__file__).resolve().parents[2]
_TARGET = re.compile(r"^([A-Za-z0-9_.-]+):", re.MULTILINE)


@functools.cache
def _root_command() -> Any:
    """The CLI's command tree (typer's vendored click: read by duck typing, as its types are private)."""
    return typer.main.get_command(app)


def _is_group(command: Any) -> bool:
    return hasattr(command, "list_commands")


@functools.cache
def _help_text(path: tuple[str, ...]) -> str:
    """What `eve <path> --help` prints (in process: the same text the CLI renders)."""
    result = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, f"eve {' '.join(path)} --help failed: {result.output}"
    return result.output


def _context(command: Any, parent: Any = None) -> Any:
    """A click context of `command` under `parent` (settings such as `-h` are inherited from it)."""
    return command.context_class(command, parent=parent, **command.context_settings)


def _options(command: Any, context: Any) -> dict[str, Any]:
    found: dict[str, Any] = {}
    help_option = command.get_help_option(context)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if param.param_type_name == "option":
            for name in (*param.opts, *param.secondary_opts):
                found[name] = param
    return found


def check_eve(command: Command) -> None:
    """`eve ...`: each subcommand exists, each flag is one of its options and shows in its `--help`,
    and no more positional arguments are given than it takes."""
    current = _root_command()
    context = _context(current)
    path: list[str] = []
    words = list(command.words[1:])
    while words and _is_group(current) and not words[0].startswith("-"):
        sub = current.get_command(context, words[0])
        assert sub is not None, f"{command.where}: `{command}`: eve has no command {' '.join([*path, words[0]])!r}"
        current, context, path = sub, _context(sub, context), [*path, words.pop(0)]
    options, positional = _options(current, context), 0
    arguments = [p for p in current.params if p.param_type_name == "argument"]
    while words:
        word = words.pop(0)
        if not word.startswith("-") or word == "-":
            positional += 1
            continue
        name = word.split("=", 1)[0]
        option = options.get(name)
        assert option is not None, (
            f"{command.where}: `{command}`: `eve {' '.join(path)}` has no option {name!r}; "
            f"it has {', '.join(sorted(options))}"
        )
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", _help_text(tuple(path))), (
            f"{command.where}: {name!r} is missing from `eve {' '.join(path)} --help`"
        )
        if not (option.is_flag or option.count) and "=" not in word:
            assert words, f"{command.where}: `{command}`: {name} needs a value"
            words.pop(0)
    takes = sum(argument.nargs if argument.nargs > 0 else 99 for argument in arguments)
    if _is_group(current):
        assert positional == 0 or current.invoke_without_command, f"{command.where}: `{command}` names no command"
    else:
        assert positional <= takes, f"{command.where}: `{command}`: `eve {' '.join(path)}` takes {takes} argument(s)"


@functools.cache
def make_targets() -> frozenset[str]:
    """The targets the Makefile defines."""
    return frozenset(_TARGET.findall((ROOT / "Makefile").read_text())) - {".PHONY", ".DEFAULT_GOAL"}


def check_make(command: Command) -> None:
    """`make ...`: every target named exists."""
    for target in command.words[1:]:
        if not target.startswith("-") and "=" not in target:
            assert target in make_targets(), f"{command.where}: `{command}`: the Makefile has no target {target!r}"


class CurlRequest:
    """The request a `curl` command sends: method, path and JSON body (None without `-d`)."""

    def __init__(self, method: str, path: str, body: object) -> None:
        self.method, self.path, self.body = method, path, body


def curl_request(command: Command) -> CurlRequest:
    """Read the method, the URL's path and the `-d` body of a `curl` command; a body must be JSON."""
    method: str | None = None
    url: str | None = None
    body: object = None
    words = list(command.words[1:])
    while words:
        word = words.pop(0)
        if word in ("-X", "--request"):
            method = words.pop(0)
        elif word.startswith("-X"):
            method = word[2:]
        elif word in ("-d", "--data", "--data-raw"):
            text = words.pop(0)
            try:
                body = json.loads(text)
            except ValueError as exc:
                raise AssertionError(f"{command.where}: the body of `{command}` is not JSON ({exc})") from None
        elif word in ("-H", "--header", "-o", "--output"):
            words.pop(0)
        elif not word.startswith("-"):
            url = word
    assert url is not None, f"{command.where}: `{command}` names no URL"
    parts = urlsplit(url if "://" in url else f"http://{url}")
    return CurlRequest(method or ("POST" if body is not None else "GET"), parts.path, body)


def route_matches(routes: Sequence[BaseRoute], method: str, path: str) -> bool:
    """Whether one of `routes` serves `method` at `path` (as the router would pick it)."""
    scope = {"type": "http", "method": method, "path": path, "root_path": ""}
    return any(route.matches(scope)[0] is Match.FULL for route in routes)


def described(routes: Iterable[BaseRoute]) -> str:
    """The routes' paths, for a failure message."""
    return ", ".join(sorted({str(getattr(route, "path", route)) for route in routes}))
