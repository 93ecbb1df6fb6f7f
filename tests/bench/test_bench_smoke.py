"""The benchmarks run end to end at tiny sizes: their figures exist and their invariants hold.

Timings are never asserted here (machines are shared and noisy): the benchmarks print them.
"""

from __future__ import annotations

import asyncio

import pytest

from bench import compaction, concurrency, inspector_render, recovery, step_overhead, store_growth, stream_throughput
from bench._common import BENCH_DATA, SESSION_TASK_PREFIXES


def _scratch_dirs() -> set[str]:
    return {path.name for path in BENCH_DATA.iterdir()} if BENCH_DATA.exists() else set()


def test_step_overhead_runs() -> None:
    figures = step_overhead.run(rounds=4, warmup=1)
    assert figures["turns_completed"] == {session: 5 for session in figures["turns_completed"]}
    assert len(figures["turns_completed"]) == 3
    assert figures["failed_turns"] == 0
    for key in ("raw_commit_ms", "echo_step_ms", "tool_step_ms", "watched_step_ms"):
        assert figures[key]["median"] > 0
        assert figures[key]["p90"] >= figures[key]["median"]
    # A turn writes at least its accepted message and its end (which may share a transaction); a tool
    # step also makes its call's start record durable before the tool runs, so in a transaction of its
    # own or before it.
    assert figures["echo_jobs_per_turn"] >= 2 and figures["echo_transactions_per_turn"] >= 1
    assert figures["tool_jobs_per_turn"] >= 3 and figures["tool_transactions_per_turn"] >= 2
    step_overhead.report(figures)


def test_profile_timeline_runs(capsys: pytest.CaptureFixture[str]) -> None:
    from bench import profile_timeline
    from eve_runtime.engine.emitter import Emitter
    from eve_runtime.serving import event_loop

    commit = Emitter.commit
    figures = event_loop.run(profile_timeline.measure(turns=3))
    assert Emitter.commit is commit  # the stamps are gone after the run
    for kind, commits in (("echo", 1), ("tool", 2)):
        rows = figures[kind]["rows"]
        # one per transaction: more when the writer stopped waiting for the turn's first write (a loaded machine)
        assert [what for _, what, _ in rows].count("back to the loop") >= commits
        assert figures[kind]["totals"]["writer"] > 0 and figures[kind]["totals"]["loop"] > 0
    profile_timeline.report(figures)
    assert "COMMIT" in capsys.readouterr().out


def test_concurrency_runs() -> None:
    figures = concurrency.run(sessions=25)
    assert figures["completed"] == figures["completed_second"] == figures["completed_traced"] == 25
    assert figures["failed_turns"] == 0
    assert figures["session_tasks_left"] == []
    assert figures["parked_tasks"] == figures["baseline_tasks"]
    assert not any(name.startswith(SESSION_TASK_PREFIXES) for name in figures["parked_tasks"])
    assert figures["turns_per_second"] > 0
    assert figures["raw_commits_per_second"] > 0
    assert isinstance(figures["heap_bytes_per_session"], float)
    concurrency.report(figures)


def test_store_growth_runs() -> None:
    figures = store_growth.run(steps=20)
    assert figures["turns_completed"] == figures["expected_turns"] == 10
    assert figures["failed_turns"] == 0
    assert figures["history_messages"] == 40  # per turn: the user message, the tool call, its result, the answer
    assert figures["pages_first"] > 0
    # The bench's target: the last window costs no more than the second (within two pages). At this size
    # a window is a few pages, too coarse to see a checkpoint that stores the whole conversation again;
    # dbstat's payload (exact row bytes) sees it, so it is the figure checked when this SQLite has it.
    base, last = ("payload_base", "payload_last") if figures["has_dbstat"] else ("pages_base", "pages_last")
    assert figures[last] <= figures[base] * store_growth.TARGET_RATIO + store_growth.NOISE_BYTES
    if figures["has_dbstat"]:
        assert figures["payload_first"] > 0
    store_growth.report(figures)


def test_store_growth_refuses_odd_sizes() -> None:
    with pytest.raises(ValueError, match="multiple of 10"):
        store_growth.run(steps=15)


def test_scratch_directories_are_removed() -> None:
    before = _scratch_dirs()
    step_overhead.run(rounds=1, warmup=0)
    assert not {name for name in _scratch_dirs() - before if name.startswith("step-overhead-")}


def test_stream_throughput_runs() -> None:
    figures = stream_throughput.run(events=300, runs=1)
    assert figures["events"] == 300
    assert figures["eve_per_s"] > 0 and figures["bare_per_s"] > 0


def test_profile_provider_stamps_a_turn_and_puts_everything_back(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import eve_runtime.models as models
    from bench import profile_provider
    from eve_runtime.engine import model_call, routing
    from eve_runtime.models.litellm_model import _litellm
    from eve_runtime.serving import event_loop

    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # the provider is the bench's own, on 127.0.0.1
    litellm = event_loop.run(_litellm())

    def stamped() -> tuple[object, ...]:
        return vars(routing)["start_turn"], vars(model_call)["MessageAppended"], litellm.acompletion

    originals = stamped()
    figures = profile_provider.run(rounds=2, words=5)
    assert stamped() == originals
    stamps = figures["stamps"]
    # The turn's moments come in order: the message stored, its turn opened, the provider called, its text durable.
    order = ["stored", "turn opened", "provider called", "provider answered", "first text", profile_provider.READ]
    assert [stamps[name] for name in order] == sorted(stamps[name] for name in order)
    assert stamps["provider called"] > 0 and figures["direct_first_text_ms"] > 0
    profile_provider.report(figures)
    assert "before the provider is called" in capsys.readouterr().out


@pytest.mark.scenario
def test_provider_stream_runs() -> None:
    from bench import provider_stream

    figures = provider_stream.run(rounds=1, words=20, warmup=0)
    for mode in provider_stream.MODES:
        assert figures[mode]["direct_words"] == figures[mode]["eve_words"] == 20
        assert figures[mode]["direct_words_per_s"] > 0 and figures[mode]["eve_words_per_s"] > 0
        assert figures[mode]["eve_cpu_s"] >= 0
    assert figures["first_turn_ttft_s"] > 0
    provider_stream.report(figures)


@pytest.mark.scenario
def test_recovery_runs() -> None:
    figures = recovery.run(sessions=3, delay_ms=25)
    assert figures["interrupted"] == 3
    assert figures["not_resumed"] == 0


def test_compaction_runs() -> None:
    figures = compaction.run(turns=60, window=20)
    assert figures["turns_completed"] == 60
    assert figures["failed_turns"] == 0
    assert figures["compactions"] >= 1
    assert figures["context_max_last"] <= figures["window_tokens"]
    assert figures["history_messages"] < 2 * 60
    compaction.report(figures)


def test_compaction_refuses_short_runs() -> None:
    with pytest.raises(ValueError, match="twice the window"):
        compaction.run(turns=30, window=20)


@pytest.mark.postgres
def test_postgres_bench_runs() -> None:
    from bench import postgres
    from tests import pg

    pg.require()
    steps = asyncio.run(postgres.measure_steps(rounds=3, warmup=1))
    assert steps["failed_turns"] == 0
    for key in ("raw_commit_ms", "echo_step_ms", "tool_step_ms"):
        assert steps[key]["median"] > 0
    one = postgres.throughput(1, sessions=2, turns=2)
    two = postgres.throughput(2, sessions=1, turns=2)
    assert one["turns"] == two["turns"] == 4
    assert one["failed"] == two["failed"] == 0
    postgres.report(steps, one, two)


@pytest.mark.postgres
def test_postgres_trips_counts_two_round_trips_an_echo_turn_and_three_a_tool_turn() -> None:
    from bench import postgres, postgres_trips
    from eve_runtime.serving import event_loop

    reason = postgres.unreachable()
    if reason is not None:
        pytest.skip(reason)
    figures = event_loop.run(postgres_trips.measure_trips(10, warmup=2))
    # a lease kept between turns: the message's enqueue and the step's commits, nothing else (a
    # lease's release and its inbox read may fall into one of the ten turns)
    assert figures["echo"]["trips"] <= 10 * 2 + 2, figures["echo"]
    assert figures["tool"]["trips"] <= 10 * 3 + 2, figures["tool"]
    assert figures["echo"]["kinds"]["SELECT * FROM eve_enqueue($1, $2, $3,"] == 10
    postgres_trips.report(figures, {"echo": 0.0, "tool": 0.0}, 10)


def test_provider_failures_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    import eve_runtime.models as models
    from bench import provider_failures

    monkeypatch.setattr(models, "ALLOW_MODEL_REQUESTS", True)  # nothing it calls answers beyond 127.0.0.1
    figures = provider_failures.run(1)
    cases = figures["cases"]
    assert cases["echo turn (test model, baseline)"]["code"] is None
    for name in ("missing key (openai), first turn", "missing key (openai)", "missing key (anthropic)"):
        assert cases[name]["code"] == "MODEL_CALL_FAILED" and "API key" in cases[name]["message"]
    assert "connection refused" in cases["unreachable URL"]["message"]
    provider_failures.report(figures)


def test_inspector_render_runs() -> None:
    from tests.server.inspector.support import browser_missing

    if (reason := browser_missing()) is not None:
        pytest.skip(reason)
    figures = inspector_render.run(events=40, runs=1, warmup=False)
    assert figures["events"] >= 40
    assert figures["baseline_events"] < figures["events"]
    for key in ("baseline_ms", "conversation_ms", "raw_ms"):
        assert figures[key] > 0
    inspector_render.report(figures)


def test_telemetry_overhead_runs() -> None:
    from bench import telemetry_overhead

    figures = telemetry_overhead.run(rounds=4, warmup=1)
    assert figures["failed_turns"] == 0
    assert figures["turns_completed"] == {"off": [5, 5], "on": [5, 5]}
    assert figures["spans_exported"] == figures["spans_expected"] == 2 + 5 * 9  # every span reached the collector
    assert figures["export_requests"] >= 1
    for kind in ("echo", "tool"):
        assert figures[f"off_{kind}_ms"]["median"] > 0 and figures[f"on_{kind}_ms"]["median"] > 0
        assert figures[f"{kind}_ratio"] > 0
    telemetry_overhead.report(figures)
