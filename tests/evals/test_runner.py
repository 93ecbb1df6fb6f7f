"""The runner on a real app in process: scoped assertions, severity, stubs, input requests, the judge, control flow.

One app with many evals runs once per module (in process, on the `test` model); each test reads
one eval's result.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from eve_runtime.evals import EvalResult, EvalRunOptions, run_evals
from eve_runtime.store.sqlite import SqliteStore
from tests.helpers import minimal_app

CONFIG = "from eve_runtime import define_eval_config\nconfig = define_eval_config(max_concurrency=4)\n"


def _eval(body: str, options: str = "") -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return (
        "import asyncio, re\n"
        "from eve_runtime import define_eval\n"
        "from eve_runtime.evals import equals, includes, matches, satisfies, similarity\n"
        "from eve_runtime.models import FunctionModel\n\n"
        f"async def test(t):\n{lines}\n\n"
        f"eval = define_eval(test{options})\n"
    )


ADD = 'await t.send(\'/call add {"a": 1, "b": 2}\')'
EVALS = {
    "scoped/all_pass": _eval(
        f"""
first = {ADD}
t.completed()
t.did_not_fail()
t.no_failed_actions()
t.called_tool("add", input={{"a": 1}}, output=3, status="completed", is_error=False, times=1)
t.called_tool("add", input=lambda value: value["b"] == 2)
t.not_called_tool("danger")
t.tool_order(["add"])
t.max_tool_calls(1)
t.message_includes("add -> 3")
t.message_includes(re.compile(r"add -> \\d"))
t.event("session.started")
t.event("actions.requested", data={{"actions": [{{"toolName": "add"}}]}}, times=1)
t.event(lambda events: len(events) > 3, "more than three events")
t.not_event("turn.failed")
t.event_order([{{"type": "actions.requested"}}, {{"type": "action.result"}}, {{"type": "message.completed"}}])
first.called_tool("add")
first.expect_ok()
t.check(first.message, equals("add -> 3"))
"""
    ),
    "scoped/gate_fails": _eval('await t.send("hello")\nt.completed()\nt.called_tool("add")\nt.used_no_tools()'),
    "scoped/order_fails": _eval(f'{ADD}\nt.tool_order(["danger", "add"])\nt.event_order([{{"type": "turn.failed"}}])'),
    "severity/soft_miss": _eval('await t.send("hello")\nt.completed()\nt.called_tool("add").soft(0.5)'),
    "severity/soft_tracked": _eval('await t.send("hello")\nt.completed()\nt.called_tool("add").soft()'),
    "severity/gate_override": _eval(f'{ADD}\nt.check(t.reply, similarity("add -> 3!")).gate(0.99)'),
    "stubs/sequence": _eval(
        """
t.session(stubs=[
    {"id": "five", "tool": "add", "match": {"a": {"const": 5}}, "outcome": {"response": "five"}},
    {"id": "seq", "tool": "add", "outcomes": [
        {"response": {"sum": "one"}}, {"throw": {"message": "boom", "name": "Down"}},
    ]},
])
await t.send('/call add {"a": 1, "b": 1}\\n/call add {"a": 5, "b": 0}')
await t.send('/call add {"a": 2, "b": 2}')
await t.send('/call add {"a": 3, "b": 3}')
t.called_tool("add", input={"a": 1}, output={"sum": "one"}, times=1)
t.called_tool("add", input={"a": 5}, output="five", times=1)
t.called_tool("add", input={"a": 2}, status="failed", is_error=True, times=1)
t.called_tool("add", input={"a": 3}, status="failed", times=1)
t.called_tool("add", output=2, times=0)
t.message_includes("boom")
"""
    ),
    "stubs/unmatched_runs_real_tool": _eval(
        """
t.session(stubs=[{"id": "only-nine", "tool": "add", "match": {"a": {"const": 9}}, "outcome": {"response": 0}}])
await t.send('/call add {"a": 1, "b": 2}')
t.called_tool("add", output=3, times=1)
"""
    ),
    "stubs/invalid": _eval(
        't.session(stubs=[{"id": "x", "tool": "nope", "outcome": {"response": 1}}])\nawait t.send("hi")'
    ),
    "hitl/approve": _eval(
        """
await t.send('/call danger {"target": "prod"}')
t.waiting()
(request,) = t.expect_input_requests(tool="danger", count=1)
turn = await t.respond((request, "approve"))
turn.called_tool("danger", output={"done": "prod"})
t.completed()
"""
    ),
    "hitl/none_pending": _eval('await t.send("hi")\nt.expect_input_requests()'),
    "judge/passes": _eval(
        'await t.send("be polite")\nt.judge("The answer is polite.").at_least(0.8)',
        ', judge=FunctionModel(lambda messages, info: \'{"score": 0.9, "reason": "polite enough"}\')',
    ),
    "judge/fails": _eval(
        'await t.send("be polite")\nt.judge("The answer is polite.").gate(0.5)',
        ', judge=FunctionModel(lambda messages, info: \'{"score": 0.2, "reason": "rude"}\')',
    ),
    "judge/broken": _eval(
        'await t.send("be polite")\nt.judge("The answer is polite.")',
        ", judge=FunctionModel(lambda messages, info: 'I would rather not say')",
    ),
    "control/skip": _eval('t.skip("not on this target")\nt.completed()'),
    "control/raises": _eval('await t.send("hi")\nt.completed()\nraise ValueError("broken eval")'),
    "control/timeout": _eval("await asyncio.sleep(30)", ", timeout_ms=200"),
    "control/require": _eval('t.require(1, equals(2))\nt.log("unreached")'),
    "control/nothing_asserted": _eval('await t.send("hi")'),
    "values/checks": _eval(
        """
await t.send("/reply Sunny and 72F")
t.log("checking the reply")
t.check(t.reply, includes("Sunny"))
t.check(t.reply, includes(re.compile(r"\\d+F")))
t.check({"city": "Paris", "n": 1}, equals({"city": "Paris", "n": 1}))
t.check({"city": "Paris"}, matches({"type": "object", "required": ["city"]}))
t.check(t.reply, similarity("Sunny and 72F")).at_least(0.9)
t.check(len(t.reply), satisfies(lambda n: n < 50, "short"))
"""
    ),
    "values/structured": _eval(
        """
schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
turn = await t.send('/json {"city": "Paris"}', output_schema=schema)
turn.output_equals({"city": "Paris"})
t.output_matches(schema)
t.check(turn.output, equals({"city": "Paris"}))
t.output_matches({"type": "object", "required": ["country"]}).soft(1)
"""
    ),
    "multi/subagent": _eval(
        """
await t.send('/call helper {"message": "/reply from the helper"}')
t.completed()
t.called_subagent("helper", output=re.compile("from the helper"), status="completed", times=1)
t.called_subagent("helper", output="something else", times=0)
"""
    ),
    "multi/sessions": _eval(
        """
other = t.new_session()
await t.send("/reply first")
await other.send("/reply second")
other.message_includes("second")
t.message_includes("first")
t.message_includes("second")
t.check(other.session_id != t.session_id, equals(True))
t.check(other.transcript, equals([{"role": "user", "text": "/reply second"}, {"role": "assistant", "text": "second"}]))
"""
    ),
}
FILES = {
    "agent/tools/add.py": 'def add(a: int, b: int) -> int:\n    """Add two numbers."""\n    return a + b\n',
    "agent/tools/danger.py": (
        "from eve_runtime import tool\n\n@tool(needs_approval=True)\n"
        'def danger(target: str) -> dict:\n    """Do something risky."""\n    return {"done": target}\n'
    ),
    "agent/subagents/helper/agent.py": (
        'from eve_runtime import define_agent\nagent = define_agent(model="test", description="Helps.")\n'
    ),
    "agent/subagents/helper/instructions.md": "You help.\n",
    "evals/evals_config.py": CONFIG,
    "evals/data.eval.py": (
        "from eve_runtime import define_eval\n\n"
        "def case(word):\n    async def test(t):\n        await t.send(f'/reply {word}')\n"
        "        t.message_includes(word)\n    return define_eval(test, tags=['data'])\n\n"
        "evals = [case('one'), case('two')]\n"
    ),
    **{f"evals/{name}.eval.py": body for name, body in EVALS.items()},
}


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return minimal_app(tmp_path_factory.mktemp("evals"), FILES)


@pytest.fixture(scope="module")
def results(app: Path) -> dict[str, EvalResult]:
    run = asyncio.run(run_evals(EvalRunOptions(app_root=app, junit=app / "junit.xml")))
    return {result.id: result for result in run.results}


def _failed_names(result: EvalResult) -> list[str]:
    return [item.name for item in result.failures]


def test_scoped_assertions_pass_on_what_the_agent_did(results: dict[str, EvalResult]) -> None:
    result = results["scoped/all_pass"]
    assert result.status == "passed", [item.to_json() for item in result.failures]
    assert len(result.assertions) == 17
    assert {item.scope for item in result.assertions} == {"run", "turn", "value"}


def test_a_missed_gate_fails_the_eval(results: dict[str, EvalResult]) -> None:
    assert results["scoped/gate_fails"].status == "failed"
    assert _failed_names(results["scoped/gate_fails"]) == ["called_tool"]
    assert _failed_names(results["scoped/order_fails"]) == ["tool_order", "event_order"]


def test_severity_soft_at_least_and_gate(results: dict[str, EvalResult]) -> None:
    assert results["severity/soft_miss"].status == "scored"
    assert results["severity/soft_tracked"].status == "passed"
    assert results["severity/gate_override"].status == "failed"  # similarity is soft unless made a gate
    assert results["values/checks"].status == "passed", [item.to_json() for item in results["values/checks"].failures]


def test_stubs_first_match_wins_and_outcomes_advance_then_repeat(results: dict[str, EvalResult]) -> None:
    result = results["stubs/sequence"]
    assert result.status == "passed", [item.to_json() for item in result.failures]
    (events,) = result.events.values()
    outputs = [e["data"].get("status") for e in events if e["type"] == "action.result"]
    assert outputs == ["completed", "completed", "failed", "failed"]  # the calls are still on the stream
    assert results["stubs/unmatched_runs_real_tool"].status == "passed"


def test_invalid_stubs_are_refused_before_the_session_exists(results: dict[str, EvalResult]) -> None:
    result = results["stubs/invalid"]
    assert result.status == "error"
    assert "names no tool of the agent: 'nope'" in (result.error or "")
    assert result.session_ids == []


def test_input_requests_and_respond(results: dict[str, EvalResult]) -> None:
    assert results["hitl/approve"].status == "passed", [i.to_json() for i in results["hitl/approve"].failures]
    assert _failed_names(results["hitl/none_pending"]) == ["expect_input_requests"]


def test_the_judge_scores_through_the_configured_model(results: dict[str, EvalResult]) -> None:
    passing = results["judge/passes"]
    assert passing.status == "passed"
    (judged,) = passing.assertions
    assert (judged.score, judged.message, judged.severity) == (0.9, "polite enough", "soft")
    assert results["judge/fails"].status == "failed"
    broken = results["judge/broken"]
    assert broken.status == "failed"  # a judge that cannot judge fails even a tracked-only judgment
    assert "did not answer" in (broken.assertions[0].error or "")


def test_skip_raise_timeout_require(app: Path, results: dict[str, EvalResult]) -> None:
    assert results["control/skip"].status == "skipped"
    assert results["control/skip"].skip_reason == "not on this target"
    raised = results["control/raises"]
    assert raised.status == "error"
    assert raised.error == f"ValueError: broken eval (at {app / 'evals' / 'control' / 'raises.eval.py'}:9)"
    assert len(raised.assertions) == 1  # what it asserted before raising is kept
    assert results["control/timeout"].status == "error"
    assert results["control/timeout"].error == "timed out after 200 ms"
    required = results["control/require"]
    assert (required.status, required.logs) == ("failed", [])
    assert results["control/nothing_asserted"].status == "failed"


def test_structured_output(results: dict[str, EvalResult]) -> None:
    result = results["values/structured"]
    assert result.status == "scored", [item.to_json() for item in result.failures]
    assert _failed_names(result) == ["output_matches"]


def test_datasets_get_indexed_ids(results: dict[str, EvalResult]) -> None:
    assert results["data/0000"].status == results["data/0001"].status == "passed"
    assert results["data/0000"].tags == ("data",)


def test_a_subagent_call(results: dict[str, EvalResult]) -> None:
    assert results["multi/subagent"].status == "passed", [i.to_json() for i in results["multi/subagent"].failures]


def test_sessions_are_independent_and_feed_the_run(results: dict[str, EvalResult]) -> None:
    result = results["multi/sessions"]
    assert result.status == "passed", [item.to_json() for item in result.failures]
    assert len(result.session_ids) == 2


def test_every_session_stays_in_the_local_store(app: Path, results: dict[str, EvalResult]) -> None:
    wanted = [session_id for result in results.values() for session_id in result.session_ids]

    async def stored() -> dict[str, int]:
        store = SqliteStore(app / ".eve" / "workflow-data")
        await store.open()
        try:
            return {session_id: len(await store.read_events(session_id)) for session_id in wanted}
        finally:
            await store.close()

    counts = asyncio.run(stored())
    assert wanted and all(counts[session_id] > 0 for session_id in wanted)


def test_artifacts_hold_every_result(app: Path, results: dict[str, EvalResult]) -> None:
    runs = [path for path in (app / ".eve" / "evals").iterdir() if (path / "evals" / "values__checks.json").is_file()]
    (run_dir,) = runs  # the module's full run (the concurrency tests run a few evals only)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["ok"] is False
    assert summary["counts"]["passed"] + summary["counts"]["failed"] + summary["counts"]["error"] > 0
    lines = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert {line["id"] for line in lines} == set(results)
    detail = json.loads((run_dir / "evals" / "values__checks.json").read_text())
    assert detail["logs"] == ["checking the reply"]
    events = (run_dir / "evals" / "values__checks.events.jsonl").read_text().splitlines()
    assert json.loads(events[0])["event"]["type"] == "session.started"


@pytest.mark.parametrize(("limit", "first_done_after"), [(1, 1), (3, 3)])
def test_max_concurrency_bounds_the_evals_running_at_once(app: Path, limit: int, first_done_after: int) -> None:
    seen: list[str] = []
    options = EvalRunOptions(app_root=app, selectors=["data", "multi/sessions"], max_concurrency=limit)
    run = asyncio.run(
        run_evals(options, on_start=lambda eval_id: seen.append("start"), on_done=lambda result: seen.append("done"))
    )
    assert [result.id for result in run.results] == ["data/0000", "data/0001", "multi/sessions"]
    assert seen.index("done") == first_done_after  # each eval awaits the server, so all allowed start first
    assert seen.count("start") == seen.count("done") == 3
