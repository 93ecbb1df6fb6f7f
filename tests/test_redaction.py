"""The redactor: which values are secret, and how text, JSON, options and log records are masked."""

from __future__ import annotations

import json
import logging

import pytest

from eve_runtime.redaction import MASK, RedactingFilter, Redactor, install_log_redaction, is_secret_name

SECRET = "s3cr3t-value-with-length"


def test_secret_names_and_the_minimum_length() -> None:
    env = {
        "EVE_AUTH_TOKEN": "token-of-twenty-chars",
        "OPENAI_API_KEY": "sk-openai-1234567890",
        "DB_PASSWORD": "hunter2-hunter2",
        "MY_CLIENT_SECRET": "client-secret-xyz",
        "DEBUG_TOKEN": "1",  # too short to mask: it would mask every "1"
        "HOME": "/home/someone-long-enough",
        "KEYRING_PATH": "/var/lib/keyring/long-path",  # a location, not a secret
    }
    redactor = Redactor(env)
    assert set(redactor.secrets()) == {
        "token-of-twenty-chars",
        "sk-openai-1234567890",
        "hunter2-hunter2",
        "client-secret-xyz",
    }
    assert redactor.text("a 1 and sk-openai-1234567890 in /home/someone-long-enough") == (
        f"a 1 and {MASK} in /home/someone-long-enough"
    )
    assert is_secret_name("ANTHROPIC_API_KEY") and not is_secret_name("PATH")


def test_the_password_of_a_url_in_the_environment_is_a_secret() -> None:
    redactor = Redactor({"EVE_DATABASE_URL": "postgresql://eve:pg-password-42@db.internal:5432/eve"})
    assert redactor.secrets() == ("pg-password-42",)
    assert redactor.text("could not connect as eve:pg-password-42@db") == f"could not connect as eve:{MASK}@db"


def test_the_environment_is_read_again_when_it_grows() -> None:
    env: dict[str, str] = {}
    redactor = Redactor(env)
    assert redactor.text(SECRET) == SECRET
    env["NEW_SECRET"] = SECRET
    assert redactor.text(SECRET) == MASK


def test_json_text_and_data_are_masked_in_their_escaped_forms() -> None:
    quoted = 'pa"ss\\word-ünïcode'
    redactor = Redactor({"X_PASSWORD": quoted})
    for text in (json.dumps({"m": f"x {quoted} y"}), json.dumps({"m": f"x {quoted} y"}, ensure_ascii=False)):
        masked = redactor.text(text)
        assert json.loads(masked) == {"m": f"x {MASK} y"}
    assert json.loads(redactor.data(json.dumps({"m": quoted}, ensure_ascii=False).encode())) == {"m": MASK}
    assert redactor.value({"a": [quoted, 3, {"b": f"-{quoted}-"}]}) == {"a": [MASK, 3, {"b": f"-{MASK}-"}]}


def test_model_options_are_masked_by_key_and_remembered_by_value() -> None:
    redactor = Redactor({})
    options = {
        "api_key": "sk-short",
        "temperature": 0.2,
        "extra_headers": {"Authorization": "Bearer abcdefghijkl", "X-Trace": "on"},
        "aws_secret_access_key": "aws-secret-0123456789",
    }
    assert redactor.options(options) == {
        "api_key": MASK,
        "temperature": 0.2,
        "extra_headers": {"Authorization": MASK, "X-Trace": "on"},
        "aws_secret_access_key": MASK,
    }
    assert options["api_key"] == "sk-short"  # the options themselves are unchanged
    redactor.remember_options(options)
    assert redactor.text("echo Bearer abcdefghijkl and aws-secret-0123456789") == f"echo {MASK} and {MASK}"


def test_a_log_record_is_masked_with_its_arguments_and_traceback(caplog: pytest.LogCaptureFixture) -> None:
    redactor = Redactor({"SOME_TOKEN": SECRET})
    logger = logging.getLogger("eve.test.redaction")
    handler_filter = RedactingFilter(redactor)
    caplog.handler.addFilter(handler_filter)
    try:
        try:
            raise RuntimeError(f"failed with {SECRET}")
        except RuntimeError:
            logger.exception("token %s refused", SECRET)
    finally:
        caplog.handler.removeFilter(handler_filter)
    assert SECRET not in caplog.text
    assert f"token {MASK} refused" in caplog.text and f"RuntimeError: failed with {MASK}" in caplog.text


def test_installed_redaction_masks_records_of_every_handler(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logging, "_logRecordFactory", logging.getLogRecordFactory())  # restored after the test
    redactor = Redactor({"SOME_TOKEN": SECRET})
    install_log_redaction(redactor)
    install_log_redaction(redactor)  # idempotent
    logging.getLogger("eve.test.redaction").warning("value=%s", SECRET)
    assert caplog.records[-1].getMessage() == f"value={MASK}"
