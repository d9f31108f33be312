"""The double-claim detector: live claims by job, fed by the workers' claim and finish records."""

from __future__ import annotations

import time
from typing import Any


class ClaimLedger:
    """Live claims by job: flags a job claimed while another live owner holds it.

    A legitimate second claim follows a completion, a failure, a release, a
    rollback, the owner's death, or a requeue / lease expiry (which advances
    the lease token). Records from different workers reach the parent out of
    order, so a conflicting claim is a suspect until the earlier owner's
    finish record arrives: excused if that finish started before the new
    claim returned, counted otherwise or after GRACE_S without one. A claim
    whose token is older than the current owner's is an old record heard late,
    not a new claim.
    """

    GRACE_S = 5.0

    def __init__(self) -> None:
        self.owners: dict[Any, tuple[int, Any]] = {}
        self.by_worker: dict[int, set[Any]] = {}
        # (job, earlier owner, its token) -> (new claim's wall time, deadline)
        self.suspects: dict[tuple[Any, int, Any], tuple[float, float]] = {}
        self.double_claims = 0
        self.examples: list[str] = []

    def _count(self, job: Any, owner: int, token: Any) -> None:
        self.double_claims += 1
        if len(self.examples) < 5:
            self.examples.append(f"job {job} claimed while worker {owner} held it (token {token})")

    def claim(self, k: int, job: Any, token: Any, at: float, alive: set[int]) -> None:
        prev = self.owners.get(job)
        if prev and token is not None and prev[1] is not None and token < prev[1]:
            # an older claim heard late (its worker was stopped with the record unsent, say):
            # the lease moved on since, past it, and the owner with the newer token stays
            self.by_worker.setdefault(k, set()).add(job)
            return
        if prev and prev[0] in alive and (token is None or prev[1] is None or token <= prev[1]):
            self.suspects[(job, *prev)] = (at, time.monotonic() + self.GRACE_S)
        self.owners[job] = (k, token)
        self.by_worker.setdefault(k, set()).add(job)

    def finish(self, k: int, job: Any, token: Any, at: float) -> None:
        suspect = self.suspects.pop((job, k, token), None)
        if suspect and at > suspect[0]:
            self._count(job, k, token)
        if self.owners.get(job) == (k, token):
            del self.owners[job]
        self.by_worker.get(k, set()).discard(job)

    def worker_gone(self, k: int) -> None:
        """A dead worker's session is gone, and with it its locks and transaction."""
        for key in [key for key in self.suspects if key[1] == k]:
            del self.suspects[key]
        for job in self.by_worker.pop(k, set()):
            if self.owners.get(job, (None,))[0] == k:
                del self.owners[job]

    def expire(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        for key, (_, deadline) in list(self.suspects.items()):
            if now >= deadline:
                del self.suspects[key]
                self._count(*key)
