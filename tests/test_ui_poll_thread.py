"""The poll thread: one run at a time, none before the app is done with the last, and the
connection closed (on_exit) when it stops."""

from __future__ import annotations

import threading

from dashboard.ui.poll_thread import PollThread

DEADLINE_S = 10.0


def test_one_run_at_a_time_and_none_before_the_last_is_done():
    started = threading.Semaphore(0)
    release = threading.Event()
    exited = threading.Event()
    runs: list[str] = []

    def work():
        runs.append(threading.current_thread().name)
        started.release()
        release.wait(DEADLINE_S)

    thread = PollThread(work, on_exit=exited.set, name="test-poll")
    assert thread.run_in(0.0)
    assert started.acquire(timeout=DEADLINE_S)
    assert thread.busy and not thread.run_in(0.0)  # under way: a second run is refused
    release.set()
    assert not started.acquire(timeout=0.3)  # its work returned, but the app is not done
    thread.done()
    assert thread.run_in(0.0) and started.acquire(timeout=DEADLINE_S)
    thread.done()
    assert thread.run_in(60.0) and thread.run_in(None)  # asked, then taken back
    assert not started.acquire(timeout=0.3)
    thread.stop(wait_s=DEADLINE_S)
    assert exited.is_set() and runs == ["test-poll", "test-poll"]
    assert not thread.run_in(0.0)  # stopped: no more runs
