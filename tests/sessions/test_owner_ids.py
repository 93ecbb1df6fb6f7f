"""Owner ids name their machine, so a restarted process can tell its own dead predecessors' leases."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

from eve_runtime.sessions.ownership import is_dead_sibling, new_owner_id


def _with_pid(owner: str, pid: int) -> str:
    host, _pid, rand, machine = owner.rsplit(":", 3)
    return f"{host}:{pid}:{rand}:{machine}"


def test_an_owner_of_this_machine_whose_process_ended_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert is_dead_sibling(_with_pid(new_owner_id(), child.pid))


def test_a_running_process_this_one_and_other_machines_are_not() -> None:
    owner = new_owner_id()
    assert owner.startswith(f"{socket.gethostname()}:{os.getpid()}:")
    assert not is_dead_sibling(owner)  # this process
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"]) as alive:
        try:
            assert not is_dead_sibling(_with_pid(owner, alive.pid))
        finally:
            alive.kill()
    host, pid, rand, machine = owner.rsplit(":", 3)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = int(ended.stdout)
    assert not is_dead_sibling(f"{host}:{gone}:{rand}:{'0' * 12}")  # another kernel or pid namespace
    assert not is_dead_sibling(f"elsewhere:{gone}:{rand}:{machine}")  # another host
    assert not is_dead_sibling(f"{host}:{gone}:{rand}")  # an id of the older format: its lease expires by itself
    assert not is_dead_sibling("garbage")
