"""Run the shop as its own project: a copy outside the repository, its own settings, real servers.

Every process gets an environment with no ``DJANGO_SETTINGS_MODULE`` (``manage.py`` and
``shop/asgi.py`` pick ``shop.settings`` themselves), no ``DATABASE_URL`` unless a test says so,
and none of the farm's or the toolkit's settings variables; its working directory is the copy,
where ``cluck`` is not importable (the wheel and the editable install hold only the three apps).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

PROJECT = Path(__file__).resolve().parent
ROOT = PROJECT.parents[1]
GUIDE = ROOT / "docs" / "new-project.md"
PROJECT_FILES = ("manage.py", "shop", "catalog")

_DROPPED_PREFIXES = ("DJANGO_", "CLUCK_", "MCP_TOOLS_", "TENANCY_", "IDEMPOTENCY_", "PYTHON")


def copy_project(destination: Path) -> Path:
    """The shop's files (no caches, no database) under ``destination/shop``."""
    target = destination / "shop"
    target.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "db.sqlite3")
    for name in PROJECT_FILES:
        source = PROJECT / name
        if source.is_dir():
            shutil.copytree(source, target / name, ignore=ignore)
        else:
            shutil.copy2(source, target / name)
    return target


def shop_env(database_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(_DROPPED_PREFIXES) and key != "DATABASE_URL"
    }
    if database_url:
        env["DATABASE_URL"] = database_url
    env.update(extra)
    return env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Shop:
    """One copy of the project and the environment its processes run in."""

    path: Path
    env: dict[str, str] = field(default_factory=shop_env)

    def run(self, argv: list[str], *, stdin: str | None = None) -> str:
        """Run ``argv`` (``python …`` runs on this interpreter) in the project; its stdout and
        then its stderr.

        Raises:
            AssertionError: the command failed, with its output.
        """
        if argv and argv[0] == "python":
            argv = [sys.executable, *argv[1:]]
        done = subprocess.run(
            argv,
            cwd=self.path,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=180,
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
        """Start one server per kind (the guide's command plus a free port), all at once;
        yield their base URLs when every one answers; stop them afterwards."""
        started: list[tuple[subprocess.Popen[bytes], str]] = []
        logs: list[Any] = []
        try:
            for kind in kinds:
                port = free_port()
                if kind == "runserver":
                    argv = [*guide_server_command(kind), f"127.0.0.1:{port}", "--noreload"]
                else:
                    host = ["--host", "127.0.0.1", "--port", str(port)]
                    argv = ["python", "-m", *guide_server_command(kind), *host]
                # A file, not a pipe: runserver logs every request, and a full pipe would
                # stall it.
                log = (self.path / f"{kind}-{port}.log").open("w+b")
                logs.append(log)
                process = subprocess.Popen(
                    [sys.executable if part == "python" else part for part in argv],
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


# --- the guide -------------------------------------------------------------------------------

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.M | re.S)


def guide_blocks() -> list[tuple[str, str]]:
    """``(language, text)`` of every fenced block of docs/new-project.md, in order."""
    return [(match[1], match[2]) for match in _FENCE.finditer(GUIDE.read_text())]


def guide_file_blocks() -> dict[str, str]:
    """The blocks that are files of the project: Python blocks whose first line is
    ``# <path>``, e.g. ``# catalog/mcp.py``; the text after that line, by path."""
    files = {}
    for language, text in guide_blocks():
        first, _, rest = text.partition("\n")
        if language == "python" and re.fullmatch(r"# [\w/]+\.py", first):
            files[first[2:]] = rest
    return files


def guide_commands() -> list[list[str]]:
    """Every command line of the guide's shell blocks that runs in the project (those starting
    with ``python manage.py`` or ``uvicorn``), split as a shell would; comments dropped."""
    commands = []
    for language, text in guide_blocks():
        if language != "bash":
            continue
        for line in text.splitlines():
            argv = shlex.split(line, comments=True)
            if argv[:2] == ["python", "manage.py"] or argv[:1] == ["uvicorn"]:
                commands.append(argv)
    return commands


def guide_server_command(kind: str) -> list[str]:
    """The guide's own line for ``runserver`` or ``uvicorn``."""
    for argv in guide_commands():
        if kind in argv[:3]:
            return argv
    raise AssertionError(f"docs/new-project.md shows no {kind} command")


# --- set-up ------------------------------------------------------------------------------

CLERK_PASSWORD = "a-long-clerk-password"

# Run by one ``manage.py shell`` process: a store, its owner and a personal access token per
# code, through the same commands the guide shows (add_member, issue_token).
SETUP_SCRIPT = """
import io, json
from django.core.management import call_command
from catalog.models import Store

tokens = {}
for code, email in %(members)r:
    Store.objects.get_or_create(code=code, defaults={"name": code.title()})
    call_command("add_member", tenant=code, email=email, role="Admin", stdout=io.StringIO())
    out = io.StringIO()
    call_command("issue_token", tenant=code, email=email, stdout=out)
    tokens[email] = out.getvalue().strip()
print("TOKENS=" + json.dumps(tokens))
"""


def owners_with_tokens(shop: Shop, members: list[tuple[str, str]]) -> dict[str, str]:
    """``{email: token}`` for ``[(store code, owner email)]``, in one process."""
    out = shop.manage("shell", "-c", SETUP_SCRIPT % {"members": members})
    (line,) = [line for line in out.splitlines() if line.startswith("TOKENS=")]
    tokens: dict[str, str] = json.loads(line.removeprefix("TOKENS="))
    return tokens


@dataclass
class GuidedShop:
    """The shop after the guide's commands: their outputs, and the tokens they printed."""

    shop: Shop
    outputs: list[tuple[list[str], str]] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)

    def output_of(self, *argv: str) -> str:
        (out,) = [out for command, out in self.outputs if command[: len(argv)] == list(argv)]
        return out


def run_guide(shop: Shop) -> GuidedShop:
    """Every ``python manage.py …`` line of the guide, verbatim and in order (but startapp and
    the servers)."""
    guided = GuidedShop(shop)
    for argv in guide_commands():
        # The copy is the project startapp began (its files are the guide's); servers are
        # started by the tests that talk to them.
        if argv[:1] == ["uvicorn"] or {"startapp", "runserver"} & set(argv[2:3]):
            continue
        stdin = f"{CLERK_PASSWORD}\n" if "--password-from-stdin" in argv else None
        out = shop.run(argv, stdin=stdin)
        guided.outputs.append((argv, out))
        if argv[2] == "issue_token":  # it prints only the token (stderr aside)
            (token,) = re.findall(r"^ck_pat_\S+$", out, re.M)
            guided.tokens[argv[argv.index("--email") + 1]] = token
    return guided
