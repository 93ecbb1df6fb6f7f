"""Typed answers to approvals and questions become structured responses."""

from __future__ import annotations

from eve_cli.tui.answers import answer_for, answer_hint, option_label
from eve_runtime.client import InputRequest

APPROVAL = InputRequest.from_wire(
    {
        "requestId": "r1",
        "kind": "tool-approval",
        "options": [{"id": "approve", "label": "Approve"}, {"id": "cancel", "label": "Cancel"}],
    },
    {},
)
QUESTION = InputRequest.from_wire(
    {
        "requestId": "q1",
        "kind": "question",
        "options": [{"id": "red", "label": "Red wine"}, {"id": "white", "label": "White wine"}],
        "allowFreeform": True,
    },
    {},
)


def test_approvals_take_yes_no_numbers_and_names() -> None:
    for typed in ("y", "YES", "1", "approve", "Approve "):
        assert answer_for(APPROVAL, typed) == {"requestId": "r1", "optionId": "approve"}
    for typed in ("n", "no", "2", "cancel", "deny"):
        assert answer_for(APPROVAL, typed) == {"requestId": "r1", "optionId": "cancel"}
    assert answer_for(APPROVAL, "maybe") is None
    assert answer_for(APPROVAL, "3") is None
    assert "y (approve) or n (deny)" in answer_hint(APPROVAL)


def test_an_approvals_cancel_option_reads_deny_and_other_labels_stay() -> None:
    assert [option_label(APPROVAL, option) for option in APPROVAL.options] == ["Approve", "Deny"]
    assert [option_label(QUESTION, option) for option in QUESTION.options] == ["Red wine", "White wine"]


def test_questions_take_options_or_free_text() -> None:
    assert answer_for(QUESTION, "2") == {"requestId": "q1", "optionId": "white"}
    assert answer_for(QUESTION, "red wine") == {"requestId": "q1", "optionId": "red"}
    assert answer_for(QUESTION, "rosé please") == {"requestId": "q1", "text": "rosé please"}
    assert answer_for(QUESTION, "  ") is None
    closed = InputRequest.from_wire({"requestId": "q2", "kind": "question", "options": [{"id": "a"}]}, {})
    assert answer_for(closed, "b") is None
    assert "1) a" in answer_hint(closed)
