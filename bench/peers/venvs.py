"""The peers' own venvs: pinned, created once under ``var/bench-peers/`` and reused.

    .venv/bin/python -m bench.peers.venvs [peer ...]   # create (or check) them ahead of a run

A peer cannot share the project venv: django-mcp-server needs ``mcp`` 1.x where Cluck needs
2.x, and neither peer belongs in Cluck's dependencies. Each venv holds the peer at its pinned
version plus the stack the peer project runs on (Django, DRF, django-ratelimit, psycopg,
uvicorn) at the versions *this* interpreter has, so both sides of a comparison run the same
Django and the same server. ``tenancy`` and ``idempotency`` come from the checkout
(``PYTHONPATH``), not from the venv. The folder's name is a digest of the requirements: a new
pin, or a bump of the project's Django, builds a new one; an old one is left for ``rm``.

This module imports nothing outside the standard library: ``bench/mcp_bench.py`` and
``tests/test_bench_smoke.py`` call it from the project venv.
"""

from __future__ import annotations

import fcntl
import hashlib
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
VENVS: Final = ROOT / "var" / "bench-peers"

# The peer itself at a pinned version (a new release is a deliberate bump, like the clients).
PEERS: Final[dict[str, tuple[str, ...]]] = {
    # 0.5.x is built on mcp 1.x's FastMCP and StreamableHTTPSessionManager; the same mcp 1.x
    # as pyproject's clients-mcp1 group.
    "django-mcp-server": ("django-mcp-server==0.5.7", "mcp==1.30.0"),
    "django-mcpz": ("django-mcpz==1.2.0",),
}
# What the peer projects run on, pinned to this interpreter's versions.
SHARED: Final = (
    "Django",
    "djangorestframework",
    "django-ratelimit",
    "psycopg",
    "psycopg-binary",
    "psycopg-pool",
    "dj-database-url",
    # tenancy verifies external identity providers' JWTs with it (tenancy.idp.external_jwt).
    "joserfc",
    "httpx",
    "uvicorn",
    "httptools",
    "uvloop",
)


class PeerUnavailableError(RuntimeError):
    """A peer's venv could not be created (offline, a pin gone from the index)."""


def requirements(peer: str) -> list[str]:
    """The peer's pins, then the shared stack at this interpreter's versions."""
    return [*PEERS[peer], *(f"{name}=={metadata.version(name)}" for name in SHARED)]


def venv_dir(peer: str) -> Path:
    digest = hashlib.sha256("\n".join(requirements(peer)).encode()).hexdigest()[:12]
    return VENVS / f"{peer}-{digest}"


def ensure(peer: str) -> Path:
    """The peer venv's python, creating and filling the venv on first use.

    Raises:
        PeerUnavailableError: the venv could not be created or filled; its message says why
            (pip's last lines) and how to retry.
    """
    folder = venv_dir(peer)
    python = folder / "bin" / "python"
    stamp = folder / ".installed"
    if stamp.exists():
        return python
    VENVS.mkdir(parents=True, exist_ok=True)
    # Two runs at once (two xdist workers' bench smokes, a bench beside a test run) must not
    # both build it: one's `venv --clear` emptied the venv the other had just filled.
    with open(VENVS / f"{folder.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            _create(peer, folder, python, stamp)
    return python


def _create(peer: str, folder: Path, python: Path, stamp: Path) -> None:
    requirement_list = requirements(peer)
    steps = [
        [sys.executable, "-m", "venv", "--clear", "--without-pip", str(folder)],
        [
            sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet",
            "--disable-pip-version-check", "--no-input", *requirement_list,
        ],
    ]  # fmt: skip
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-6:])
            raise PeerUnavailableError(
                f"cannot create the {peer} venv {folder} ({' '.join(requirement_list)}): "
                f"{step[2]} exited {done.returncode}.\n{tail}\n"
                "It needs PyPI once; afterwards it is reused. Retry with "
                f"`.venv/bin/python -m bench.peers.venvs {peer}`."
            )
    stamp.write_text("\n".join(requirement_list) + "\n")


def main() -> None:
    for peer in sys.argv[1:] or list(PEERS):
        print(f"{peer}: {ensure(peer)}")


if __name__ == "__main__":
    main()
