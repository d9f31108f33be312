"""The file a recording is written to: ours, private, and never someone else's.

A recording holds other sessions' query text, so it is created 0600 (SQLite gives its
-wal and -shm files the database file's mode). `--out` never writes through what is
already at the path unless it is a recording queuetop wrote for this user: a symbolic
link (dangling or not) is refused, and so is a file another user owns, one others may
write, an empty one (planted in a shared directory), or one whose schema holds anything a
recording does not (a trigger would run on every frame written; a view is no table).
A new file is created with O_EXCL and O_NOFOLLOW, so nothing can be slipped in between
the look and the creation.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from dashboard.errors import UserError
from dashboard.recorder import store

SIDE_FILES = ("-wal", "-shm", "-journal")


def _refuse(path: Path, why: str, flag: str = "--out ") -> UserError:
    return UserError(
        f"{flag}{path} {why}: queuetop writes a recording only to a new file or to one it "
        "wrote for you; give another path"
    )


def _check_owned(path: Path, st: os.stat_result, what: str = "", flag: str = "--out ") -> None:
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(path, f"{what}is a symbolic link", flag)
    if not stat.S_ISREG(st.st_mode):
        raise _refuse(path, f"{what}is not a regular file", flag)
    if st.st_uid != os.geteuid():
        raise _refuse(path, f"{what}belongs to another user (uid {st.st_uid})", flag)
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise _refuse(
            path, f"{what}may be written by other users (mode {st.st_mode & 0o777:o})", flag
        )


def _check_schema(path: Path, flag: str = "--out ") -> None:
    """Only a recording's own tables and indexes: no trigger, no view, nothing else."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        try:
            problem = store.schema_problem(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise _refuse(path, f"is not a queuetop recording ({exc})", flag) from None
    if problem:
        raise _refuse(path, f"is not a recording queuetop wrote ({problem})", flag)


def prepare(path: Path) -> bool:
    """Make `path` safe to open for writing: True when it is a recording of ours to extend,
    False when it was just created (empty, 0600); a UserError otherwise."""
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            _check_owned(side, os.lstat(side), f"has a {suffix} file that ")
        except FileNotFoundError:
            pass
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            raise _refuse(path, "appeared while queuetop was creating it") from None
        except OSError as exc:
            raise UserError(f"cannot create recording {path}: {exc.strerror}") from None
        os.close(fd)
        return False
    _check_owned(path, st)
    if st.st_size == 0:
        raise _refuse(path, "exists and is empty (no recording queuetop wrote)")
    _check_schema(path)
    return True


def check_replaceable(path: Path) -> None:
    """`path` may be replaced by a new recording (a saved rewind, once the user said yes): a
    recording queuetop wrote for this user, with nothing in a log beside it (a -wal file
    that is not empty, or a -journal: a recorder writes to it, or one crashed; a replay
    leaves an empty -wal and a -shm, ours too); a UserError otherwise. Nothing is written."""
    for suffix in SIDE_FILES:
        side = Path(f"{path}{suffix}")
        try:
            side_st = os.lstat(side)
        except FileNotFoundError:
            continue
        _check_owned(side, side_st, f"has a {suffix} file that ", "")
        if suffix != "-shm" and side_st.st_size:
            raise _refuse(path, f"has a {suffix} log beside it (being recorded to?)", "")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return  # gone meanwhile: a new file then
    _check_owned(path, st, flag="")
    if st.st_size == 0:
        raise _refuse(path, "is empty (no recording queuetop wrote)", "")
    _check_schema(path, "")
