"""A bare install starts (issue 33): ``pip install cluck`` with no extras runs the guide.

Issue 33 found ``pip install cluck`` alone unable to run ``manage.py``: tenancy imported
``httpx`` at start-up, which nothing declared, and the packaging test installed the wheel with
its extras, which brought it. Here the wheel (tests/packaging/conftest.py) goes into a fresh
venv outside the repository **with no extras**; ``django-admin startproject`` makes the project
and ``startapp`` its app, the files of docs/new-project.md replace theirs, and every
``python manage.py …`` line of the guide runs verbatim (``makemigrations``, ``migrate``,
``check``, a store, ``add_member``, ``issue_token``, ``mcp_tools``) on SQLite, as the guide
does; then the guide's ``runserver`` and ``uvicorn`` serve the guide's tools, and an HTTP
``tools/list`` with the printed token lists them on each. Each extra is then installed into a
copy of that venv and the feature it brings is configured, imported and checked; configured
*without* its extra, a feature stops start-up with an error naming the extra to install
(``a2a_tools``: the system check ``a2a_tools.E001``).

The install is measured (distributions, bytes in site-packages) and the figures the README and
docs/new-project.md state are held to it, like the Node version docs/connecting-clients.md
states for the MCP Inspector.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.mutations import mutation
from tests.packaging.test_distribution import ROOT, Dists, InstalledShop, run
from tests.project_harness import file_blocks
from tests.shop.harness import GUIDE, run_guide, shop_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

README = ROOT / "README.md"
CLIENTS_GUIDE = ROOT / "docs" / "connecting-clients.md"


@dataclass
class BareInstall:
    venv: Path
    env: dict[str, str]
    distributions: list[str]
    site_packages_bytes: int
    bytes_by_name: dict[str, int]

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")


def venv_env(venv: Path) -> dict[str, str]:
    """An environment that sees only ``venv`` (not this checkout's apps, not its venv)."""
    env = shop_env(PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    return env


def pip_install(venv: Path, requirement: str, cwd: Path) -> None:
    run(
        [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
         "--quiet", requirement],
        cwd,
        venv_env(venv),
    )  # fmt: skip


# Run by the venv's Python: what pip installed, and how much of site-packages it takes.
MEASURE = r"""
import importlib.metadata, json, os, sysconfig
site = sysconfig.get_paths()["purelib"]
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(site) for f in fs)
def files(dist):  # its RECORD: the files pip wrote for it, bytecode included
    paths = [os.path.join(site, str(f)) for f in dist.files or ()]
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
dists = list(importlib.metadata.distributions())
print(json.dumps({"names": sorted(d.metadata["Name"] for d in dists), "bytes": size,
                  "by_name": {d.metadata["Name"]: files(d) for d in dists}}))
"""


@pytest.fixture(scope="module")
def bare(dists: Dists, tmp_path_factory: Any) -> BareInstall:
    """A fresh venv (no pip of its own) with the wheel alone, no extras."""
    base = tmp_path_factory.mktemp("bare")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, venv_env(venv))
    pip_install(venv, str(dists.wheel), base)
    measured = json.loads(run([str(venv / "bin" / "python"), "-c", MEASURE], base, venv_env(venv)))
    return BareInstall(
        venv, venv_env(venv), measured["names"], measured["bytes"], measured["by_name"]
    )


def start_project(bare: BareInstall, base: Path) -> InstalledShop:
    """``django-admin startproject shop`` and ``startapp catalog`` from the venv, then the
    guide's files over theirs."""
    run(["django-admin", "startproject", "shop"], base, bare.env)
    path = base / "shop"
    run([bare.python, "manage.py", "startapp", "catalog"], path, bare.env)
    for name, text in file_blocks(GUIDE).items():
        (path / name).write_text(text)

    return InstalledShop(path, env=bare.env, python=bare.python)


def tools_list(url: str, token: str) -> dict[str, Any]:
    response = httpx.post(
        f"{url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=30,
    )
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


WHERE_FROM = "import tenancy, importlib.util as u; print(tenancy.__file__, u.find_spec('cluck'))"


@mutation("pyproject.toml", find='  "joserfc>=1.8,<2",\n', replace="")
def test_a_bare_install_runs_the_new_project_guide_and_serves_tools_list(
    bare: BareInstall, tmp_path: Path
) -> None:
    """Mutation: drop ``joserfc`` (which tenancy imports at start-up, for external JWTs) from
    the dependencies in pyproject.toml → red: the bare install's first ``manage.py`` command is
    a ``ModuleNotFoundError``, as ``httpx`` was in issue 33."""
    shop = start_project(bare, tmp_path)
    guided = run_guide(shop)

    assert "System check identified no issues" in guided.output_of("python", "manage.py", "check")
    (token,) = guided.tokens.values()
    where = shop.run(["python", "-c", WHERE_FROM])
    assert Path(where.split()[0]).is_relative_to(bare.venv), where
    assert where.split()[1] == "None", "the farm is importable from the bare install"

    # The guide's two servers: runserver, and uvicorn on shop/asgi.py (uvicorn comes with the
    # SDK: nothing more to install).
    with shop.servers(["runserver", "uvicorn"]) as urls:
        answers = [tools_list(url, token) for url in urls]
    for answer in answers:
        assert answer["id"] == 1
        names = {tool["name"] for tool in answer["result"]["tools"]}
        assert names == {"shop_list_products", "shop_add_product"}


# --- the extras ------------------------------------------------------------------------------

# extra: (settings added to the guide's, the URLs before the guide's, a statement that uses it)
EXTRA_FEATURES: dict[str, tuple[str, str | None, str]] = {
    "oauth": (
        "from tenancy.oauth.defaults import oauth2_provider_settings\n"
        'INSTALLED_APPS = [*INSTALLED_APPS, "oauth2_provider", "tenancy.oauth"]\n'
        "OAUTH2_PROVIDER = oauth2_provider_settings()\n"
        'TENANCY_OAUTH_SIGN_IN = "toolkit"\n',
        "tenancy.oauth.urls",
        "import tenancy.oauth.views",
    ),
    "a2a": (
        'INSTALLED_APPS = [*INSTALLED_APPS, "a2a_tools"]\n',
        "a2a_tools.urls",
        "import a2a_tools.views",
    ),
    "metrics": (
        "",
        None,
        "from mcp_tools.observability import metrics; assert metrics.prometheus_client",
    ),
    "otel": (
        "",
        None,
        "from mcp_tools.observability import tracing; assert tracing.available()",
    ),
    "redis": (
        "CACHES = {\n"
        '    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},\n'
        '    "counters": {\n'
        '        "BACKEND": "django.core.cache.backends.redis.RedisCache",\n'
        '        "LOCATION": "redis://127.0.0.1:6379/0",\n'
        '        "OPTIONS": {"pool_class": "tenancy.rates.redis_pool.ProcessConnectionPool"},\n'
        "    },\n"
        "}\n"
        'RATELIMIT_USE_CACHE = "counters"\n',
        None,
        "import tenancy.rates.redis_pool",
    ),
    "rq": (
        'INSTALLED_APPS = [*INSTALLED_APPS, "django_rq", "django_tasks_rq"]\n'
        'TASKS = {"default": {"BACKEND": "django_tasks_rq.RQBackend",'
        ' "QUEUES": ["default", "mcp_tools"]}}\n'
        "RQ_QUEUES = {name: {'URL': 'redis://127.0.0.1:6379/0', 'DEFAULT_TIMEOUT': -1}"
        " for name in ('default', 'mcp_tools')}\n",
        None,
        "import django_tasks_rq",
    ),
    # docs/existing-project.md "Tasks on your engine": the toolkit's job registered with Celery
    # (no broker needed to import and check).
    "celery": (
        'INSTALLED_APPS = [*INSTALLED_APPS, "django_tasks_fennel"]\n'
        'TASKS = {"default": {"BACKEND": "django_tasks_fennel.CeleryBackend",'
        ' "QUEUES": ["default", "mcp_tools"]}}\n'
        'MCP_TOOLS_TASK_QUEUE = "mcp_tools"\n'
        'CELERY_BROKER_URL = "redis://127.0.0.1:6379/0"\n',
        None,
        "import mcp_tools.tasks, celery; "
        'assert "django_tasks:mcp_tools.tasks.run_task" in celery.current_app.tasks',
    ),
}


def configure(shop: InstalledShop, extra: str) -> str:
    """Settings ``shop.settings_<extra>``: the guide's plus the extra's feature; its name."""
    settings, urls, _ = EXTRA_FEATURES[extra]
    module = f"settings_{extra}"
    lines = [
        "from shop.settings import *  # noqa: F403",
        "from shop.settings import INSTALLED_APPS",
    ]
    if urls:
        (shop.path / "shop" / f"urls_{extra}.py").write_text(
            "from django.urls import include, path\n\nfrom shop.urls import urlpatterns\n\n"
            f'urlpatterns = [path("", include("{urls}")), *urlpatterns]\n'
        )
        lines.append(f'ROOT_URLCONF = "shop.urls_{extra}"')
    (shop.path / "shop" / f"{module}.py").write_text("\n".join(lines) + "\n" + settings)
    return f"shop.{module}"


def attempt(
    shop: InstalledShop, argv: list[str], settings: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [shop.python, *argv],
        cwd=shop.path,
        env={**shop.env, "DJANGO_SETTINGS_MODULE": settings},
        capture_output=True,
        text=True,
        timeout=180,
    )


def copy_venv(venv: Path, to: Path) -> Path:
    """A copy of ``venv`` (its interpreter links kept): ``python`` there runs on the copy."""
    shutil.copytree(venv, to, symlinks=True)
    return to


def test_each_extra_installs_and_its_feature_passes_check(
    bare: BareInstall, dists: Dists, tmp_path: Path
) -> None:
    """Per extra, in a copy of the bare venv: ``pip install 'cluck[<extra>]'``, the feature
    configured as the docs say, its modules imported and ``check`` clean."""
    shop = start_project(bare, tmp_path)
    for extra in EXTRA_FEATURES:
        venv = copy_venv(bare.venv, tmp_path / f"venv-{extra}")
        pip_install(venv, f"{dists.wheel}[{extra}]", tmp_path)
        on_extra = InstalledShop(shop.path, env=venv_env(venv), python=str(venv / "bin" / "python"))
        settings = configure(on_extra, extra)
        # One process: the feature's modules, then manage.py check's own command (an error
        # is its SystemCheckError, a non-zero exit).
        use = (
            f"import django; django.setup(); {EXTRA_FEATURES[extra][2]}; "
            "from django.core.management import call_command; call_command('check')"
        )
        done = attempt(on_extra, ["-c", use], settings)
        # Warnings pass: django-ratelimit's own for Django's RedisCache, say.
        assert done.returncode == 0, (extra, done.stdout, done.stderr)


@mutation(
    "tenancy/oauth/apps.py",
    find='if importlib.util.find_spec("oauth2_provider") is None:',
    replace="if False:",
)
def test_tenancy_oauth_without_its_extra_names_the_extra(bare: BareInstall, tmp_path: Path) -> None:
    """Mutation: drop tenancy.oauth's look for django-oauth-toolkit before its models import
    it → red: ``check`` on the bare install ends in ``No module named 'oauth2_provider'`` from
    tenancy/oauth/models.py, which names no extra.

    Not a system check: its models subclass django-oauth-toolkit's, so the app cannot load
    without it (and the guide's ``"oauth2_provider"`` in INSTALLED_APPS stops Django before
    any app of ours with ``No module named 'oauth2_provider'``). Here tenancy.oauth is listed
    alone, and start-up stops on the error that names the extra."""
    shop = start_project(bare, tmp_path)
    settings = configure(shop, "oauth")
    path = (shop.path / settings.replace(".", "/")).with_suffix(".py")
    path.write_text(path.read_text().replace('"oauth2_provider", ', ""))
    done = attempt(shop, ["manage.py", "check"], settings)
    assert done.returncode != 0
    assert "tenancy.oauth needs django-oauth-toolkit: pip install 'cluck[oauth]'" in done.stderr


@mutation(
    "a2a_tools/urls.py",
    find="if sdk_installed():\n",
    replace="if True:\n",
)
def test_a2a_tools_without_its_extra_is_check_E001_not_a_traceback(
    bare: BareInstall, tmp_path: Path
) -> None:
    """``a2a_tools`` in INSTALLED_APPS and its URLs included as docs/a2a.md says, on the bare
    install: ``check`` reports ``a2a_tools.E001`` naming the extra, and ``migrate`` stops on
    the same check, with no traceback. Mutation: route the views whatever is installed → red:
    the URL check imports them and every command ends in ``No module named 'a2a'``."""
    shop = start_project(bare, tmp_path)
    settings = configure(shop, "a2a")
    for argv in (["manage.py", "check"], ["manage.py", "migrate", "--no-input"]):
        done = attempt(shop, argv, settings)
        assert done.returncode != 0
        assert "a2a_tools.E001" in done.stderr, done.stderr
        assert "pip install 'cluck[a2a]'" in done.stderr
        assert "Traceback" not in done.stderr, done.stderr


@mutation(
    "tenancy/checks.py",
    find='    if importlib.util.find_spec("redis") is not None:\n        return []\n',
    replace="    return []\n",
)
def test_a_redis_cache_without_its_extra_is_check_E030(bare: BareInstall, tmp_path: Path) -> None:
    """The rate counters on Redis as docs/deploying.md says, on the bare install: nothing
    imports redis until the first count (every /mcp call would be a 500), so ``check`` says
    ``tenancy.E030`` with the extra to install. Mutation: never look for the package → red."""
    shop = start_project(bare, tmp_path)
    done = attempt(shop, ["manage.py", "check"], configure(shop, "redis"))
    assert done.returncode != 0
    assert "tenancy.E030" in done.stderr and "pip install 'cluck[redis]'" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr


# --- the figures the docs state --------------------------------------------------------------


def stated_install(text: str) -> tuple[int, int]:
    """``(distributions, MB)`` from "adds N distributions and M MB"."""
    match = re.search(r"adds (\d+) distributions and (\d+) MB", text)
    assert match, "no 'adds N distributions and M MB' claim"
    return int(match[1]), int(match[2])


def stated_names(text: str) -> list[str]:
    """The quoted list of distributions after the claim (a ``>`` block)."""
    block = re.search(r"adds \d+ distributions.*?\n\n((?:> [^\n]*\n)+)", text, re.S)
    assert block, "no list of distributions after the claim"
    joined = " ".join(line[2:] for line in block[1].splitlines())
    return [name.strip().rstrip(".") for name in joined.split(",")]


@mutation("docs/new-project.md", find="adds 37 distributions", replace="adds 34 distributions")
def test_the_docs_state_the_bare_install_the_test_measured(bare: BareInstall) -> None:
    """Mutation: put back the guide's old count (34 distributions) → red: the bare install
    holds 37. The README and docs/new-project.md state what this test measured: the count, the
    names and the size (within 10 %: bytecode and platform wheels vary)."""
    measured_mb = bare.site_packages_bytes / 1_000_000
    for doc in (GUIDE, README):
        text = doc.read_text()
        count, mb = stated_install(text)
        assert count == len(bare.distributions), (doc.name, count, bare.distributions)
        assert abs(mb - measured_mb) <= 0.1 * measured_mb, (doc.name, mb, measured_mb)
    names = stated_names(GUIDE.read_text())
    assert sorted(names, key=str.lower) == sorted(bare.distributions, key=str.lower)
    # The parts the guide names: the apps, Django, cryptography.
    text = " ".join(GUIDE.read_text().split())
    for name, pattern in (
        ("cluck", r"decorator\), ([\d.]+) MB together"),
        ("Django", r"Django is ([\d.]+) MB of it"),
        ("cryptography", r"`cryptography`, which the SDK's JWT support pulls in, ([\d.]+) MB"),
    ):
        match = re.search(pattern, text)
        assert match, (name, pattern)
        measured = bare.bytes_by_name[name] / 1_000_000
        assert abs(float(match[1]) - measured) <= 0.1 * measured, (name, match[1], measured)


def _engine_floor(package: str) -> str:
    """The Node version ``package`` declares it needs, from clients/node's lockfile."""
    lock = json.loads((ROOT / "clients" / "node" / "package-lock.json").read_text())
    engines: str = lock["packages"][f"node_modules/{package}"]["engines"]["node"]
    return engines.removeprefix(">=")


@mutation(
    "docs/connecting-clients.md",
    find="Inspector 2.12.0 declares Node ≥ 22.19.0",
    replace="Inspector 2.12.0 needs Node ≥ 22.19",
)
def test_the_node_claims_are_what_the_suite_runs() -> None:
    """Mutation: say again that Inspector 2.12.0 *needs* Node ≥ 22.19 → red: it runs on
    Node 20.20 (issue 33); what holds is what its package declares, and the Node the suite runs
    it on (scripts/ensure-node)."""
    text = CLIENTS_GUIDE.read_text()
    floor = _engine_floor("@modelcontextprotocol/inspector")
    ensure_node = (ROOT / "scripts" / "ensure-node").read_text()
    (suite_node,) = re.findall(r'^NODE_VERSION="([\d.]+)"$', ensure_node, re.M)
    assert f"Inspector 2.12.0 declares Node ≥ {floor}" in text
    assert f"runs it on Node {suite_node}" in text
    assert "needs **Node.js 22.19" not in text and "needs Node ≥ 22.19" not in text
