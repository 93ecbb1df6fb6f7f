"""`bench/peers/run.py` end to end on eve's side at a tiny size (the peers' venv is not built in CI).

Timings are never asserted (machines are shared and noisy): the run prints them.
"""

from __future__ import annotations

import pytest

from bench._common import REPO_ROOT
from bench.peers import run as peers


def test_peers_bench_runs_for_eve_on_sqlite() -> None:
    figures = peers.run(rounds=1, turns=2, size_turns=3, crash_runs=1, peers=("eve",), backends=("sqlite",))
    assert len(figures["turns"]["eve/sqlite"]) == 2  # the warm-up round is not counted
    assert all(seconds > 0 for seconds in figures["turns"]["eve/sqlite"])
    assert len(figures["raw"]["sqlite"]) == 2
    assert figures["sizes"]["eve/sqlite"] > 0
    crash = figures["crash"]["eve/sqlite"]
    # the resumed process calls the model again (the interrupted step re-runs) before the turn ends
    assert 0 < crash["first_event_s"] <= crash["done_s"]
    peers.report(figures)


def test_peers_bench_refuses_peers_without_their_venv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peers, "PEERS_PYTHON", REPO_ROOT / ".no-such-venv" / "bin" / "python")
    with pytest.raises(SystemExit, match="make bench-peers"):
        peers.run(rounds=1, turns=1, size_turns=0, crash_runs=0, peers=("eve", "dbos"), backends=("sqlite",))
