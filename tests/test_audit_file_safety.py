"""The audit file: never written through a symlink, created 0600, refused when not ours."""

from __future__ import annotations

import os
import stat

import pytest
from demo_queue import claim, expire

from dashboard.actions import FileAudit, observe_jobs, requeue
from dashboard.errors import UserError


def test_a_new_audit_file_is_private_to_its_user(tmp_path):
    path = tmp_path / "audit.jsonl"
    FileAudit(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_symlink_at_the_audit_path_is_refused_and_its_target_untouched(demo, tmp_path):
    spec, worker, action = demo
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    link = tmp_path / "audit.jsonl"
    link.symlink_to(victim)
    with pytest.raises(UserError, match="symbolic link"):
        FileAudit(link)
    assert victim.read_text() == "keep me\n"


def test_a_symlink_planted_after_start_is_refused_before_the_change(demo, tmp_path):
    """The path is checked again at each write: an action whose record cannot be written
    changes nothing (the record is written ahead of the commit)."""
    spec, worker, action = demo
    job_id, _ = claim(worker, "worker-1")
    expire(worker, job_id)
    path = tmp_path / "audit.jsonl"
    sink = FileAudit(path)
    path.unlink()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    path.symlink_to(victim)
    jobs, _ = observe_jobs(action, spec, [str(job_id)])
    with pytest.raises(UserError, match="symbolic link"):
        requeue(action, spec, jobs, audit=sink)
    assert victim.read_text() == "keep me\n"
    status = worker.execute("SELECT status FROM queuetop_demo.jobs WHERE id = %s", (job_id,))
    assert status.fetchone()[0] == "running"  # nothing changed without its record


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_an_audit_file_owned_by_another_user_is_refused(tmp_path):
    path = tmp_path / "audit.jsonl"
    path.write_text("")
    os.chown(path, 65534, 65534)  # nobody
    with pytest.raises(UserError, match="another user"):
        FileAudit(path)
