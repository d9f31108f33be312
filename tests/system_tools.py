"""Debian packages some tests drive (prometheus, chromium): found, installed, or skipped.

.ci/run installs them up front; this installs one a test needs when run on its own, and
skips with a one-line reason where it is absent and cannot be installed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

import pytest

APT_TIMEOUT_S = 900


def _apt_install(package: str) -> str | None:
    """None once installed, else why not (one line)."""
    if not shutil.which("apt-get"):
        return "no apt-get on this machine"
    if os.geteuid() != 0:
        return "apt-get needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = [
        "apt-get",
        "install",
        "-y",
        "--no-install-recommends",
        "-o",
        "DPkg::Lock::Timeout=300",
        package,
    ]
    for attempt in ([], ["apt-get", "update", "-qq"]):  # an old package list: update, retry
        if attempt:
            subprocess.run(attempt, env=env, capture_output=True, timeout=APT_TIMEOUT_S)
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=APT_TIMEOUT_S
        )
        if done.returncode == 0:
            return None
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit {done.returncode}"


def require_binary(binary: str, package: str) -> str:
    """The path of `binary`, installing Debian's `package` if needed; else skip the test."""
    path = shutil.which(binary)
    if path:
        return path
    why = _apt_install(package)
    path = shutil.which(binary)
    if path:
        return path
    pytest.skip(f"{binary} absent and 'apt-get install {package}' failed: {why}")


def free_port() -> int:
    """A loopback port free right now (for servers that cannot report the one they bound)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
