"""Identifiers: ULIDs that python-ulid reads back, in order, with the time they were minted."""

from __future__ import annotations

import time

from ulid import ULID

from eve_runtime import ids


def test_ulids_read_back_with_their_time_and_sort_in_minting_order() -> None:
    before = time.time_ns() // 1_000_000
    minted = [ids.new_ulid() for _ in range(3000)]
    after = time.time_ns() // 1_000_000
    assert minted == sorted(minted)
    assert len(set(minted)) == len(minted)
    for text in minted:
        parsed = ULID.from_str(text)
        assert str(parsed) == text
        assert before <= parsed.milliseconds <= after


def test_the_randomness_carries_into_the_earlier_characters() -> None:
    minter = ids._UlidMinter()
    minter.milliseconds = time.time_ns() // 1_000_000 + 10_000  # a clock ahead: ids count on in that millisecond
    minter.randomness = (5 << 10) | 1023
    text = minter()  # carries out of the last two characters
    assert int(ULID.from_str(text)) == (minter.milliseconds << 80) | (6 << 10)
    assert int(ULID.from_str(minter())) == int(ULID.from_str(text)) + 1


def test_randomness_run_out_moves_to_the_next_millisecond() -> None:
    minter = ids._UlidMinter()
    ahead = time.time_ns() // 1_000_000 + 10_000
    minter.milliseconds, minter.randomness = ahead, (1 << 80) - 1
    assert ULID.from_str(minter()).milliseconds == ahead + 1


def test_session_and_event_ids_have_their_prefixes() -> None:
    assert ids.is_session_id(ids.new_session_id())
    assert ids.new_event_id().startswith("evt_")
    assert len(ids.new_event_id()) == len("evt_") + 26
