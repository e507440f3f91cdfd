"""Run a project of the repository's tests as its own project: a copy outside the repository,
its own settings, real servers, and the guide that describes it.

The shop (tests/shop, docs/new-project.md) and the tracker (tests/existing,
docs/existing-project.md) use it. Every process gets an environment with no
``DJANGO_SETTINGS_MODULE`` (``manage.py`` and the project's ``asgi.py`` pick their own
settings), no ``DATABASE_URL`` unless a test says so, none of the farm's or the toolkit's
settings variables and none of the running pytest's (``PYTEST_…``); its working directory is
the copy, where ``cluck`` is not importable (the wheel and the editable install hold only the
reusable apps). ``PYTHONPATH`` names a directory
holding only this checkout's reusable apps, so a copy runs the toolkit under test even when the
venv's editable install points at another checkout of the repository.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]

# PYTEST_: a copy's own pytest run is the team's, with its plugins (not the mutation
# runner's PYTEST_DISABLE_PLUGIN_AUTOLOAD).
_DROPPED_PREFIXES = (
    "DJANGO_",
    "CLUCK_",
    "MCP_TOOLS_",
    "TENANCY_",
    "IDEMPOTENCY_",
    "PYTHON",
    "PYTEST_",
)
TOOLKIT_PACKAGES = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")


@functools.cache
def toolkit_path() -> str:
    """A directory of links to this checkout's reusable apps, and nothing else (no farm)."""
    directory = Path(tempfile.mkdtemp(prefix="cluck-toolkit-"))
    for package in TOOLKIT_PACKAGES:
        (directory / package).symlink_to(ROOT / package, target_is_directory=True)
    return str(directory)


def copy_files(source: Path, names: Iterable[str], target: Path) -> Path:
    """``names`` (files and directories) of ``source`` under ``target``; no caches, no
    database, no server logs."""
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "db.sqlite3", "*.log")
    for name in names:
        if (source / name).is_dir():
            shutil.copytree(source / name, target / name, ignore=ignore)
        else:
            shutil.copy2(source / name, target / name)
    return target


def project_env(database_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key != "DATABASE_URL"
    }
    env["PYTHONPATH"] = toolkit_path()
    if database_url:
        env["DATABASE_URL"] = database_url
    env.update(extra)
    return env


@contextmanager
def postgres_database(prefix: str) -> Iterator[str]:
    """The URL of a new, empty database on the test run's PostgreSQL server (``DATABASE_URL``),
    dropped afterwards.

    Raises:
        LookupError: the test run has no PostgreSQL server (its ``DATABASE_URL`` is another).
    """
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise LookupError("needs the PostgreSQL server of the test run (DATABASE_URL)")
    import psycopg

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlsplit(base)._replace(path=f"/{name}").geturl()
    finally:
        with psycopg.connect(base, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def postgres_database_or_skip(prefix: str) -> Iterator[str]:
    """``postgres_database``, the test skipped when the run has no PostgreSQL server."""
    database = postgres_database(prefix)
    try:
        url = database.__enter__()
    except LookupError as missing:
        import pytest

        pytest.skip(str(missing))
    try:
        yield url
    finally:
        database.__exit__(None, None, None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Project:
    """One copy of a project, the environment its processes run in, and how it is served:
    ``server_command(kind)`` is the project's own command line for ``runserver`` or
    ``uvicorn`` (without address or port)."""

    path: Path
    env: dict[str, str]
    server_command: Callable[[str], list[str]]

    def interpreter(self) -> str:
        """The Python that ``python …`` commands and the servers run on: this one (a project
        installed in a venv of its own says which)."""
        return sys.executable

    def run(self, argv: list[str], *, stdin: str | None = None, timeout: int = 180) -> str:
        """Run ``argv`` (``python …`` runs on ``interpreter()``) in the project; its stdout and
        then its stderr.

        Raises:
            AssertionError: the command failed, with its output.
        """
        if argv and argv[0] == "python":
            argv = [self.interpreter(), *argv[1:]]
        done = subprocess.run(
            argv,
            cwd=self.path,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"{shlex.join(argv)}\n{done.stdout}\n{done.stderr}"
        return done.stdout + done.stderr

    def manage(self, *args: str, stdin: str | None = None) -> str:
        return self.run(["python", "manage.py", *args], stdin=stdin)

    @contextmanager
    def serve(self, kind: str, **env: str) -> Iterator[str]:
        """Start ``runserver`` or ``uvicorn``; yield its base URL; stop it afterwards."""
        with self.servers([kind], **env) as (url,):
            yield url

    @contextmanager
    def servers(self, kinds: list[str], **env: str) -> Iterator[list[str]]:
        """Start one server per kind (the project's command plus a free port), all at once;
        yield their base URLs when every one answers; stop them afterwards."""
        started: list[tuple[subprocess.Popen[bytes], str]] = []
        logs: list[Any] = []
        try:
            for kind in kinds:
                port = free_port()
                if kind == "runserver":
                    argv = [*self.server_command(kind), f"127.0.0.1:{port}", "--noreload"]
                else:
                    host = ["--host", "127.0.0.1", "--port", str(port)]
                    argv = ["python", "-m", *self.server_command(kind), *host]
                # A file, not a pipe: runserver logs every request, and a full pipe would
                # stall it.
                log = (self.path / f"{kind}-{port}.log").open("w+b")
                logs.append(log)
                process = subprocess.Popen(
                    [self.interpreter() if part == "python" else part for part in argv],
                    cwd=self.path,
                    env={**self.env, **env},
                    stdout=subprocess.DEVNULL,
                    stderr=log,
                )
                started.append((process, f"http://127.0.0.1:{port}"))
            for (process, url), log in zip(started, logs, strict=True):
                _wait_until_serving(process, url, log)
            yield [url for _, url in started]
        finally:
            for process, _ in started:
                process.terminate()
            for process, _ in started:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            for log in logs:
                log.close()


def _wait_until_serving(process: subprocess.Popen[bytes], url: str, log: Any) -> None:
    deadline = time.monotonic() + 120
    while True:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(log.read().decode())
        try:
            httpx.get(f"{url}/.well-known/oauth-authorization-server", timeout=2)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


# --- a guide ---------------------------------------------------------------------------------

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)
_FILE_LINE = re.compile(r"# ([\w/]+\.py)(?:, (.+))?")
_GAP = re.compile(r"^\s*# …\n", re.M)


@dataclass(frozen=True)
class GuidePart:
    """The part of a guide page a project is held to: from the line ``start`` (the top when
    ``None``) up to the line ``stop`` (the end when ``None``). Read like the page's ``Path``."""

    path: Path
    start: str | None = None
    stop: str | None = None

    @property
    def name(self) -> str:
        return self.path.name

    def read_text(self) -> str:
        text = self.path.read_text()
        if self.start is not None:
            text = text[text.index(f"\n{self.start}\n") + 1 :]
        if self.stop is not None:
            text = text[: text.index(f"\n{self.stop}\n") + 1]
        return text


Guide = Path | GuidePart


def fenced_blocks(guide: Guide) -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block of ``guide``, in order."""
    return [(match[1], match[2]) for match in _FENCE.finditer(guide.read_text())]


def file_blocks(guide: Guide) -> dict[str, str]:
    """The blocks that are files of the project: Python blocks whose first line is
    ``# <path>``, e.g. ``# catalog/mcp.py``; the text after that line, by path."""
    files = {}
    for language, text in fenced_blocks(guide):
        first, _, rest = text.partition("\n")
        if language == "python" and re.fullmatch(r"# [\w/]+\.py", first):
            files[first[2:]] = rest
    return files


def shell_commands(guide: Guide) -> list[list[str]]:
    """Every command line of the guide's shell blocks that runs in the project (those starting
    with ``python manage.py`` or ``uvicorn``), split as a shell would (a line ending in ``\\``
    goes on on the next); comments dropped."""
    commands = []
    for language, text in fenced_blocks(guide):
        if language != "bash":
            continue
        for line in text.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv[:2] == ["python", "manage.py"] or argv[:1] == ["uvicorn"]:
                commands.append(argv)
    return commands


def server_command(guide: Guide, kind: str) -> list[str]:
    """The guide's own line for ``runserver`` or ``uvicorn``."""
    for argv in shell_commands(guide):
        if kind in argv[:3]:
            return argv
    raise AssertionError(f"{guide.name} shows no {kind} command")


def code_blocks(guide: Guide) -> list[tuple[str, str | None, str]]:
    """``(path, part or None, text after the first line)`` of the guide's Python blocks whose
    first line names a file: ``# <path>`` (the whole file) or ``# <path>, <which part>``."""
    found = []
    for language, text in fenced_blocks(guide):
        first, _, rest = text.partition("\n")
        match = _FILE_LINE.fullmatch(first)
        if language == "python" and match:
            found.append((match[1], match[2], rest))
    return found


def assert_blocks_in_project(guide: Guide, project: Path) -> set[str]:
    """Every file block of ``guide`` is that file of ``project`` or, for a part, is in it: its
    pieces (between ``# …`` lines) appear in the file in that order. The paths named.

    Raises:
        AssertionError: a block differs from its file, with the piece not found.
    """
    blocks = code_blocks(guide)
    for path, part, text in blocks:
        source = (project / path).read_text()
        if part is None:
            assert source == text, f"{guide.name} differs from {path}"
            continue
        position = 0
        for piece in _GAP.split(text):
            found = source.find(piece.strip("\n"), position)
            assert found >= 0, f"{path} ({part}) has no\n{piece}"
            position = found + len(piece.strip("\n"))
    return {path for path, _, _ in blocks}
