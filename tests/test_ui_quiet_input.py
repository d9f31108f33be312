"""The dashboard's terminal input thread sleeps while no key is pending (ui/forks/quiet_driver.py),
and keys, a lone Escape and quitting work as with Textual's own driver.

Ground truth is the kernel's count of the thread's wake-ups (voluntary context switches in
/proc/PID/task/TID/status) while nobody types; Textual's LinuxDriver, run the same way, is
the control that shows the count can fail (it wakes ten times a second)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from helpers import wait_until
from pty_run import PtyRun

from dashboard.ui.forks import switched_off

APP = str(Path(__file__).with_name("quiet_input_app.py"))
QUIET_S = 2.0  # the window over which wake-ups are counted (not a timing assertion)
LINGER_S = 1.0  # no output for this long: the app has drawn and the driver settled


def wakeups(pid: int, tid: int) -> int:
    status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
    line = next(x for x in status.splitlines() if x.startswith("voluntary_ctxt_switches"))
    return int(line.split()[1])


def logged(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def settle(run: PtyRun) -> None:
    """Until the app has written all it had to (a start draws for a while when the terminal
    reads slowly), then LINGER_S more."""
    while True:
        seen = len(run.output)
        run.read(LINGER_S)
        if len(run.output) == seen:
            return


@pytest.mark.parametrize("kind", ["quiet", "textual"])
def test_input_thread_sleeps_between_keys(kind, tmp_path):
    log = tmp_path / "keys.log"
    run = PtyRun([kind, str(log)], str(tmp_path), program=[APP])
    try:
        wait_until(lambda: logged(log), timeout=60)
        driver, _, tid = logged(log)[0].split()[1:]
        # QUEUETOP_STOCK_UI (the driver piece off): PlainApp runs on Textual's own driver
        quiet = kind == "quiet" and not switched_off("driver")
        assert driver == ("QuietLinuxDriver" if quiet else "LinuxDriver")
        pid, tid = run.proc.pid, int(tid)

        def idle_wakeups() -> int:
            settle(run)
            before = wakeups(pid, tid)
            time.sleep(QUIET_S)
            return wakeups(pid, tid) - before

        idle = idle_wakeups()
        if quiet:
            assert idle <= 2, f"the input thread woke {idle} times in {QUIET_S} s of no input"
        else:
            assert idle >= 5 * QUIET_S, f"Textual's driver woke only {idle} times: no control"

        run.send(b"a")
        wait_until(lambda: "key a" in logged(log), timeout=30)
        run.send(b"\x1b")  # a lone Escape: the parser flushes it after ESCDELAY
        wait_until(lambda: "key escape" in logged(log), timeout=30)
        if quiet:
            idle = idle_wakeups()  # asleep again once the keys are handled
            assert idle <= 2, f"the input thread woke {idle} times after the keys"
        run.send(b"q")
        assert run.finish(timeout=30) == 0
    finally:
        run.close()
    assert "Traceback" not in run.output.decode(errors="replace")
