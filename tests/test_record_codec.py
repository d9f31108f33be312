"""The recording's frame codec: snapshots to JSON trees and back (generic over dataclasses),
tolerant of fields added or dropped between releases; deltas that rebuild exactly."""

from __future__ import annotations

import enum
import json
import math
import zlib
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID

from hypothesis import given, settings
from hypothesis import strategies as st
from ui_snapshots import LONG_QUERY, SERVER, T0, fixed_history, fixed_snapshot

from dashboard.audit.trail import AuditRecord
from dashboard.config import load_preset
from dashboard.models import GroupStats, LockInfo, QueueSpec, SectionState, Snapshot, StaleLease
from dashboard.recorder import codec, delta, frames, store
from dashboard.recorder.frames import FrameEncoder


def rich_snapshot() -> Snapshot:
    """Every kind of value a snapshot can carry, hostile text and awkward keys included."""
    snap = fixed_snapshot(3, rows=12)
    odd = (
        StaleLease(
            id=UUID("12345678-1234-5678-1234-567812345678"),
            status="running\x1b[2J",
            worker="w\u202eevil",
            lease_token=Decimal("1.50"),
            attempts=None,
            started_at=None,
            lease_until=T0 + timedelta(microseconds=7),
            overdue_s=math.inf,
            worker_alive=None,
            group="$dt",
            lease_token_text="2026-01-15 09:30:00.000007+00",
        ),
        replace(snap.stale_leases[0], id="job-a", lease_token=T0),
    )
    return replace(
        snap,
        stale_leases=(*snap.stale_leases, *odd),
        # raw status values are the user's: one that looks like a tag, one with an escape
        by_status={**snap.by_status, "$dt": 4, "$map": 1, "x\x1b]0;t\x07": 2},
        held_jobs={4200: ("1", "2"), 4101: ()},
        groups=(GroupStats("default", 5, 0, 2, 1, None, 0), GroupStats("", 0, 1, 0, 0, 3.5, 1)),
        sections=(
            SectionState("counts", 0.4, 1.25, 2.0),
            SectionState("idle", None, 0.0, 8.0, "x"),
        ),
        monitor_load=0.0125,
        warnings=("status value 'paused' is not mapped",),
        stale_count=14,
    )


def round_trip(value: Any, kind: Any) -> Any:
    return codec.from_tree(codec.loads(codec.dumps(codec.to_tree(value))), kind)


def test_a_rich_snapshot_comes_back_equal_through_json():
    snap = rich_snapshot()
    back = round_trip(snap, Snapshot)
    assert back == snap
    assert back.held_jobs == {4200: ("1", "2"), 4101: ()}  # int keys stay ints
    odd = back.stale_leases[-2]
    assert isinstance(odd.id, UUID) and odd.lease_token == Decimal("1.50")
    assert odd.lease_until == T0 + timedelta(microseconds=7) and odd.overdue_s == math.inf
    assert back.stale_leases[-1].lease_token == T0  # an Any field holding a datetime
    assert back.by_status["$dt"] == 4 and back.by_status["x\x1b]0;t\x07"] == 2


def test_the_json_is_canonical_and_text_exact():
    snap = rich_snapshot()
    first = codec.dumps(codec.to_tree(snap))
    assert first == codec.dumps(codec.to_tree(round_trip(snap, Snapshot)))
    tree = json.loads(first)  # plain JSON: any reader can open it, and gets the exact text
    assert tree["stale_leases"][-2]["status"] == "running\x1b[2J"
    assert tree["stale_leases"][-2]["worker"] == "w\u202eevil"


def test_the_queue_spec_and_audit_records_round_trip():
    for name in ("demo", "oban", "pg-boss", "graphile-worker"):
        spec = load_preset(name)
        assert round_trip(spec, QueueSpec) == spec
    record = AuditRecord(
        at=T0,
        action="requeue",
        target="42",
        outcome="changed",
        from_state={"status": "running", "lease_token": 3, "nested": {"$dt": "not a tag"}},
        detail={"actor": "queuetop load --rescue", "ids": [1, 2]},
        record_id="audit_id 7",
    )
    assert round_trip(record, AuditRecord) == record


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner:
    when: date
    took: timedelta
    blob: bytes = b""


@dataclass(frozen=True)
class Outer:
    colour: Colour
    inner: Inner
    tags: frozenset[str] = frozenset()
    pairs: tuple[tuple[int, str], ...] = ()
    maybe: Inner | None = None
    anything: Any = None


def test_enums_dates_bytes_sets_and_nested_dataclasses():
    value = Outer(
        Colour.BLUE,
        Inner(date(2026, 1, 15), timedelta(seconds=1.5), b"\x00\xff"),
        frozenset({"b", "a"}),
        ((1, "x"), (2, "y")),
        Inner(date(2020, 2, 29), timedelta(0)),
        {"k": [1, 2.5, None]},
    )
    assert round_trip(value, Outer) == value


@dataclass(frozen=True)
class OldLease:
    """A StaleLease as an older release wrote it: no group, no lease_token_text; and a
    field this release no longer has."""

    id: Any
    status: str
    worker: str | None
    lease_token: Any
    attempts: int | None
    started_at: datetime | None
    lease_until: datetime | None
    overdue_s: float
    worker_alive: bool | None
    gone_field: str = "dropped since"


@dataclass(frozen=True)
class NewerLease:
    """A StaleLease of a later release: a required field this recording lacks."""

    id: Any
    status: str
    holder_pids: tuple[int, ...]
    first_seen: datetime
    nested: SectionState
    overdue_s: float = 0.0
    extra: dict[str, int] = field(default_factory=dict)


def test_a_reader_ignores_unknown_fields_and_fills_missing_ones():
    old = OldLease(7, "running", "w1", 3, 2, T0, T0, 12.5, False)
    tree = codec.to_tree(old)
    read = codec.from_tree(tree, StaleLease)
    assert (read.id, read.worker, read.overdue_s) == (7, "w1", 12.5)
    assert read.group is None and read.lease_token_text is None  # their defaults
    newer = codec.from_tree(tree, NewerLease)  # required fields absent: empty values
    assert (newer.id, newer.status, newer.overdue_s) == (7, "running", 12.5)
    assert newer.holder_pids == () and newer.nested == SectionState("", None, 0.0, 0.0)
    assert newer.first_seen == datetime(1970, 1, 1, tzinfo=timezone.utc)


def test_a_field_whose_type_changed_reads_as_empty_instead_of_failing():
    tree = codec.to_tree(fixed_snapshot(0))
    tree["locks"] = "not a list any more"
    tree["server"] = {"version": "17", "database": "d", "user": "u", "address": "a", "new": 1}
    snap = codec.from_tree(tree, Snapshot)
    assert snap.locks == () and snap.server == replace(
        SERVER, version="17", database="d", user="u", address="a"
    )


json_trees = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=4), inner, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_trees, json_trees)
def test_a_delta_rebuilds_the_new_tree_exactly(old, new):
    patch = delta.diff(old, new)
    assert codec.dumps(delta.apply(old, patch)) == codec.dumps(new)


def read_frame(frame) -> Snapshot:
    """A frame as the reader reads it: through its JSON, the rows of values named."""
    return codec.from_tree(store.named(codec.loads(codec.frame_json(frame))), Snapshot)


def test_frames_encoded_against_the_previous_snapshot_rebuild_each_one():
    snaps = [fixed_snapshot(step, rows=3 + step % 5) for step in range(20)]
    snaps[7] = replace(snaps[7], locks=(), waiting=snaps[7].waiting[::-1])  # emptied, reordered
    snaps[8] = replace(snaps[8], stale_leases=snaps[8].stale_leases + snaps[8].stale_leases)
    snaps[12] = rich_snapshot()  # UUIDs, decimals, a group named "$dt", infinity in rows
    encoder, tree, sizes = FrameEncoder(), None, []
    for snap in snaps:
        patch = encoder.encode(snap)
        whole = encoder.whole()
        assert read_frame(whole) == snap
        if tree is not None:
            tree = codec.loads(
                codec.frame_json(delta.apply(tree, codec.loads(codec.frame_json(patch))))
            )
            assert codec.from_tree(store.named(tree), Snapshot) == snap
            sizes.append((len(codec.frame_json(patch)), len(codec.frame_json(whole))))
        else:
            assert patch is None
            tree = codec.loads(codec.frame_json(whole))
    assert all(small < big for small, big in sizes)
    same = fixed_history(2)[1]
    encoder.encode(same)
    assert encoder.encode(same) == {"$o": {}}  # the same snapshot again: nothing changed


def test_rows_holding_a_dict_or_a_list_are_written_as_trees_and_read_back():
    base = fixed_snapshot(1, rows=4)
    leases = [replace(s, id={"$dt": "not a tag", "k": [1, 2]}) for s in base.stale_leases]
    first = replace(base, stale_leases=tuple(leases))
    second = replace(first, stale_leases=tuple(leases[::-1]) + (base.stale_leases[0],))
    encoder = FrameEncoder()
    encoder.encode(first)
    tree = codec.loads(codec.frame_json(encoder.whole()))
    assert codec.from_tree(store.named(tree), Snapshot) == first
    patch = codec.loads(codec.frame_json(encoder.encode(second)))
    assert codec.from_tree(store.named(delta.apply(tree, patch)), Snapshot) == second


rows_of_values = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(["a", "b", "$dt"]), st.none() | st.floats(0, 3)),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(rows_of_values, rows_of_values)
def test_list_ops_rebuild_the_new_rows_exactly(old, new):
    """Copied runs, rows patched by place and new rows give the new list (rows compared by
    ==, as the encoder compares them)."""
    old_index = dict(zip(old, range(len(old)), strict=True))
    ops = codec.loads(codec.frame_json({"$l": frames._ops(old_index, old, new)}))
    rebuilt = delta.apply([list(row) for row in old], ops)
    assert rebuilt == [list(row) for row in new]


def test_small_frames_are_stored_as_json_and_large_ones_compressed():
    small = codec.frame_json({"a": "x" * (store.RAW_UP_TO - 20)})
    large = codec.frame_json({"a": [LONG_QUERY] * 40})
    assert store.squeeze(small) == small and store.unpack(store.squeeze(small)) == {
        "a": "x" * (store.RAW_UP_TO - 20)
    }
    packed = store.squeeze(large)
    assert len(packed) < len(large) / 5 and packed[:1] != b"{"
    assert zlib.decompress(packed) == large  # a plain zlib stream: any reader opens it
    assert store.unpack(packed) == codec.loads(large)


def decoded(frame) -> Any:
    return codec.loads(codec.frame_json(frame))


def rebuilt(tree, patch) -> Snapshot:
    """The snapshot a reader rebuilds from the tree before and the patch, through JSON."""
    return codec.from_tree(store.named(delta.apply(tree, decoded(patch))), Snapshot)


def test_a_field_that_ticks_in_every_row_is_written_as_one_column():
    sections = (
        SectionState("counts", 0.4, 1.25, 2.0),
        SectionState("locks", 1.0, 0.5, 1.0),
        SectionState("idle", None, 0.0, 8.0, "x"),
    )
    before = replace(fixed_snapshot(1, rows=8), sections=sections)
    after = replace(
        before,
        sections=tuple(replace(s, age_s=(s.age_s or 0) + 1.0) for s in before.sections),
        locks=tuple(replace(lock, wait_s=9.5 + n) for n, lock in enumerate(before.locks)),
    )
    encoder = FrameEncoder()
    encoder.encode(before)
    tree = decoded(encoder.whole())
    patch = encoder.encode(after)
    wait_s = codec.record_fields(LockInfo)[0].index("wait_s")
    ticks = tuple(9.5 + n for n in range(len(before.locks)))
    assert patch["$o"]["locks"] == {"$c": [[wait_s, ticks]]}
    assert "$c" in patch["$o"]["sections"]
    assert rebuilt(tree, patch) == after


def test_rows_that_moved_or_changed_little_are_not_written_as_columns():
    before = fixed_snapshot(1, rows=8)
    one = replace(before, locks=(replace(before.locks[0], wait_s=99.0), *before.locks[1:]))
    moved = replace(before, locks=before.locks[1:] + before.locks[:1])
    for after in (one, moved):
        encoder = FrameEncoder()
        encoder.encode(before)
        tree = decoded(encoder.whole())
        patch = encoder.encode(after)
        assert "$l" in patch["$o"]["locks"]  # row ops: one row patched, or a run moved
        assert rebuilt(tree, patch) == after


def test_a_row_sharing_a_long_query_with_the_row_before_is_patched_not_rewritten():
    before = fixed_snapshot(1, rows=4)
    lock = before.locks[0]
    other = replace(lock, locktype="transactionid", mode="ShareLock", granted=False,
                    relation=None, on_queue_table=False, wait_s=0.5, state="idle",
                    xid="1801", page=7, tuple_index=1, job_id="77")  # fmt: skip
    after = replace(before, locks=(other, *before.locks[1:]))
    encoder = FrameEncoder()
    encoder.encode(before)
    tree = decoded(encoder.whole())
    patch = encoder.encode(after)
    [op] = [op for op in patch["$o"]["locks"]["$l"] if op[0] == -1]
    assert op[1] == 0 and json.dumps(LONG_QUERY)[1:-1] not in codec.frame_json(patch).decode()
    assert rebuilt(tree, patch) == after


@dataclass(frozen=True, slots=True)
class Slotted:
    name: str
    value: float


@dataclass(frozen=True)
class Holder:
    taken_at: datetime
    rows: tuple[Slotted, ...]
    many: tuple[GroupStats, ...]


def test_a_large_unchanged_list_is_no_patch_and_slotted_rows_are_compared_by_value():
    many = tuple(GroupStats(f"g{n}", n, 0, 1, 0, None, 0) for n in range(1000))
    first = Holder(T0, (Slotted("a", 1.0), Slotted("b", 2.0)), many)
    # the next poll's rows are new objects of equal values
    same = Holder(
        T0 + timedelta(seconds=1),
        tuple(Slotted(s.name, s.value) for s in first.rows),
        tuple(replace(g) for g in many),
    )
    changed = replace(
        same,
        rows=(Slotted("a", 1.5), Slotted("b", 2.0)),
        many=(*same.many[:500], replace(many[500], ready=-1), *same.many[501:]),
    )
    encoder = FrameEncoder()
    encoder.encode(first)
    tree = decoded(encoder.whole())
    patch = encoder.encode(same)
    assert set(patch["$o"]) == {"taken_at"}
    tree = delta.apply(tree, decoded(patch))
    patch = encoder.encode(changed)
    assert set(patch["$o"]) == {"rows", "many"}  # the same time, a row of each changed
    assert codec.from_tree(store.named(delta.apply(tree, decoded(patch))), Holder) == changed


column_rows = st.lists(
    st.tuples(st.integers(0, 3), st.floats(0, 3) | st.none(), st.sampled_from(["x", "$dt"])),
    min_size=1,
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(column_rows, st.data())
def test_column_patches_rebuild_the_new_rows_exactly(old, data):
    """Rows of the same first values in the same places, other values drawn anew: whatever
    the patch (columns or row ops), it gives the new rows."""
    new = [
        (row[0], data.draw(st.floats(0, 3) | st.none()), data.draw(st.sampled_from(["x", "y"])))
        for row in old
    ]
    before = frames._Rows(old, dict(zip(old, range(len(old)), strict=True)), None)
    patch, _ = frames._columns(before, new)
    if patch is None:
        patch = {"$l": frames._ops(before.index, old, new)}
    rebuilt_rows = delta.apply([list(row) for row in old], decoded(patch))
    assert rebuilt_rows == [list(row) for row in new]
