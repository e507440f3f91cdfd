"""The distribution carries everything the apps use (issue 21).

The farm runs from the source tree, so a template missing from the wheel goes unnoticed there
(``/oauth/sign-in/`` was a 500, ``TemplateDoesNotExist``, in an installed copy). Here the wheel
and the sdist are built (``python -m build``: the sdist, then the wheel from the sdist) from the
files git tracks, copied outside the repository, so an untracked file can never make this pass;
``twine check --strict`` vets their metadata; both must hold every file the four apps have in
git. Then the wheel is installed with its ``oauth`` and ``a2a`` extras into a fresh venv outside
the repository, and a copy of the shop (tests/shop, the project of docs/new-project.md) with
``a2a_tools`` and OAuth sign-in added as docs/a2a.md and docs/tenancy.md say migrates, passes
``check`` and ``makemigrations --check``, collects its static files and renders every template
the apps ship, each loaded from the venv — with a working directory and an environment that
cannot see the repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.mutations import mutation
from tests.shop.harness import Shop, copy_project, shop_env

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
APPS = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")
EXTRAS = "oauth,a2a"
SETTINGS = "shop.settings_installed"

# Not the repository's files, even in a scratch copy of ./scripts/mutations (which has no .git).
# Nor what a build or an editable install leaves there (git ignores it): an earlier guard run's
# ``cluck.egg-info`` copied into the build's source lists the apps' templates in its
# SOURCES.txt, and setuptools packs them whatever pyproject.toml says (the package-data
# mutation survived a full run that way).
_NOT_SOURCE = {".venv", "var", "mutants", ".git", "build", "dist"}
_CACHES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}


def repository_files() -> list[str]:
    """The files git tracks (``git ls-files``, as they are in the working tree; an untracked
    file never counts). A scratch copy of ./scripts/mutations has no ``.git``: it holds only
    git's tracked and unignored files already, so there its own files, caches aside."""
    if (ROOT / ".git").exists():
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
        ).stdout.decode()
        return sorted(name for name in listed.split("\0") if name and (ROOT / name).is_file())
    found = []
    for directory, dirs, files in os.walk(ROOT):
        here = Path(directory)
        dirs[:] = [
            name
            for name in dirs
            if name not in _CACHES
            and not (here / name).is_symlink()
            and not (here == ROOT and name in _NOT_SOURCE)
            and not name.endswith(".egg-info")
        ]
        for name in files:
            path = here / name
            if path.is_file() and not path.is_symlink():
                found.append(path.relative_to(ROOT).as_posix())
    return sorted(found)


def app_files() -> list[str]:
    """Every file of the four apps in git: code, migrations, templates, static files, data."""
    return [name for name in repository_files() if name.split("/", 1)[0] in APPS]


def shipped(kind: str) -> dict[str, str]:
    """The apps' ``templates`` or ``static`` files in git, by the name Django finds them by
    (the path below that directory), e.g. ``tenancy_oauth/sign_in.html``."""
    names = {}
    for path in app_files():
        parts = path.split("/")
        if kind in parts[:-1]:
            at = parts.index(kind)
            names["/".join(parts[at + 1 :])] = path
    return names


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@dataclass
class Dists:
    wheel: Path
    sdist: Path


def build_dists(base: Path) -> Dists:
    """The wheel and the sdist built from a copy of the tracked files under ``base``, outside
    the repository (the ``dists`` fixture of tests/packaging/conftest.py: one build a run)."""
    source = base / "source"
    for name in repository_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    # Isolated: the build backend pyproject.toml names, installed from the index as pip would.
    run([sys.executable, "-m", "build", "--outdir", str(base / "out"), "."], source, shop_env())
    (wheel,) = (base / "out").glob("*.whl")
    (sdist,) = (base / "out").glob("*.tar.gz")
    return Dists(wheel, sdist)


def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def sdist_names(sdist: Path) -> set[str]:
    with tarfile.open(sdist) as archive:
        # Every member sits in one top directory, "cluck-<version>/".
        return {m.name.split("/", 1)[1] for m in archive.getmembers() if "/" in m.name}


@mutation("pyproject.toml", find='\n"*" = [', replace='\n# "*" = [')
def test_the_wheel_and_the_sdist_carry_every_file_of_the_apps(dists: Dists) -> None:
    """Mutation: comment out the package-data line of pyproject.toml → red: the wheel and the
    sdist lose the OAuth templates (setuptools packs only the Python files it finds)."""
    run(
        [sys.executable, "-m", "twine", "check", "--strict", str(dists.wheel), str(dists.sdist)],
        ROOT,
        shop_env(),
    )
    files = app_files()
    assert any(name.endswith(".html") for name in files), "the apps' templates are not listed"
    in_wheel, in_sdist = wheel_names(dists.wheel), sdist_names(dists.sdist)
    assert sorted(set(files) - in_wheel) == [], "files of the apps missing from the wheel"
    assert sorted(set(files) - in_sdist) == [], "files of the apps missing from the sdist"
    # The farm (cluck/) runs from the repository: only the four apps are installed.
    tops = {name.split("/", 1)[0] for name in in_wheel if not name.startswith("cluck-")}
    assert tops == set(APPS)
    assert {"README.md", "LICENSE", "pyproject.toml"} <= in_sdist
    (info,) = {name.split("/", 1)[0] for name in in_wheel if ".dist-info/" in name}
    assert f"{info}/licenses/LICENSE" in in_wheel
    with zipfile.ZipFile(dists.wheel) as archive:
        metadata = archive.read(f"{info}/METADATA").decode()
    assert "License-Expression: MIT" in metadata.splitlines()


# --- the wheel, installed -------------------------------------------------------------------

SETTINGS_FILE = '''\
"""The shop with every app of the distribution: a2a_tools (docs/a2a.md) and OAuth sign-in
(docs/tenancy.md, tenancy.oauth)."""

from tenancy.oauth.defaults import oauth2_provider_settings

from shop.settings import *  # noqa: F403
from shop.settings import BASE_DIR, INSTALLED_APPS

INSTALLED_APPS = [*INSTALLED_APPS, "a2a_tools", "oauth2_provider", "tenancy.oauth"]
OAUTH2_PROVIDER = oauth2_provider_settings()
TENANCY_OAUTH_SIGN_IN = "toolkit"  # the shop has no login of its own
ROOT_URLCONF = "shop.urls_installed"
STATIC_ROOT = BASE_DIR / "collected-static"
'''

URLS_FILE = """\
from django.urls import include, path

from shop.urls import urlpatterns as shop_urls

urlpatterns = [
    path("", include("tenancy.oauth.urls")),  # before mcp_tools.urls
    path("", include("a2a_tools.urls")),
    *shop_urls,
]
"""

# Run in the project by the venv's Python: where the apps come from, then every page of the
# apps that renders a template, each with the templates it used (name, file) and its status.
RENDER_SCRIPT = r"""
import base64, hashlib, importlib.util, io, json, secrets, sys
from urllib.parse import parse_qs, urlencode, urlsplit

import django

django.setup()
from django.test.utils import setup_test_environment

setup_test_environment()  # the test Client sees which templates a response rendered

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

import tenancy
from catalog.models import Store

PASSWORD = "a-long-owner-password"
EMAIL = "owner@main.example"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
pages = {}


def seen(label, response, *texts):
    pages[label] = {
        "status": response.status_code,
        "templates": [[t.name, t.origin.name if t.origin else None] for t in response.templates],
        "texts": {text: text in response.content.decode() for text in texts},
        "location": response.get("Location"),
    }
    return response


Store.objects.create(code="main", name="Main Street")
sys.stdin = io.StringIO(PASSWORD + "\n")
call_command("add_member", tenant="main", email=EMAIL, role="Admin", password_from_stdin=True,
             stdout=io.StringIO())
outsider = get_user_model()._default_manager.create_user(
    username="nobody@main.example", email="nobody@main.example", password=PASSWORD
)

seen("sign-in", Client().get("/oauth/sign-in/"), "Sign in")
seen("sign-in refused", Client().post(
    "/oauth/sign-in/", {"username": EMAIL, "password": "wrong-password"}), 'role="alert"')
browser = Client()
seen("signed in", browser.post("/oauth/sign-in/", {"username": EMAIL, "password": PASSWORD}))

api = Client()
registered = api.post("/oauth/register/", json.dumps({
    "client_name": "Packaged Client", "redirect_uris": [REDIRECT_URI],
    "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
    "token_endpoint_auth_method": "none",
}), content_type="application/json")
assert registered.status_code == 201, registered.content
client_id = registered.json()["client_id"]
verifier = secrets.token_urlsafe(48)
challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode()
query = {
    "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI,
    "scope": "mcp:read mcp:write", "state": "st4te",
    "code_challenge": challenge.rstrip("="), "code_challenge_method": "S256",
}
authorize = "/oauth/authorize/?" + urlencode(query)
page = seen("consent", browser.get(authorize), "Packaged Client", "Main Street")
form = {k: v for k, v in page.context["form"].initial.items() if v is not None}
form.update({"allow": "Allow", "membership": page.context["memberships"][0].pk})
allowed = seen("consent allowed", browser.post(authorize, form))
code = parse_qs(urlsplit(allowed["Location"]).query)["code"][0]
token = api.post("/oauth/token/", urlencode({
    "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI,
    "client_id": client_id, "code_verifier": verifier,
}), content_type="application/x-www-form-urlencoded")
assert token.status_code == 200, token.content
seen("clients", browser.get("/oauth/clients/"), "Packaged Client", "Main Street")
seen("consent error", browser.get(
    "/oauth/authorize/?" + urlencode({**query, "client_id": "no-such-client"})),
    "This request cannot be completed")
stranger = Client()
stranger.force_login(outsider)
seen("consent without membership", stranger.get(authorize), "is not an active member of any")

print("PAGES=" + json.dumps({
    "tenancy": tenancy.__file__,
    "farm": importlib.util.find_spec("cluck") is not None,
    "sys_path": sys.path,
    "pages": pages,
}))
"""

# label: (status, the app template it renders, or None for a redirect)
EXPECTED_PAGES = {
    "sign-in": (200, "tenancy_oauth/sign_in.html"),
    "sign-in refused": (200, "tenancy_oauth/sign_in.html"),
    "signed in": (302, None),
    "consent": (200, "tenancy_oauth/consent.html"),
    "consent allowed": (302, None),
    "clients": (200, "tenancy_oauth/clients.html"),
    "consent error": (400, "tenancy_oauth/consent.html"),
    "consent without membership": (200, "tenancy_oauth/consent.html"),
}


@dataclass
class InstalledShop(Shop):
    """The shop run by the fresh venv's Python (``python …`` means that one here)."""

    python: str = ""

    def interpreter(self) -> str:
        return self.python


@pytest.fixture(scope="module")
def installed_shop(dists: Dists, tmp_path_factory: Any) -> InstalledShop:
    """A fresh venv outside the repository with the wheel and its extras; the shop beside it,
    with every app of the distribution, on SQLite."""
    base = tmp_path_factory.mktemp("installed")
    venv = base / "venv"
    env = shop_env(DJANGO_SETTINGS_MODULE=SETTINGS, PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    # Only the installed wheel: not the links to this checkout's apps other copies run.
    env.pop("PYTHONPATH", None)
    env.pop("VIRTUAL_ENV", None)
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base, env)
    python = str(venv / "bin" / "python")
    run(
        [sys.executable, "-m", "pip", "--python", python, "install", "--quiet",
         f"{dists.wheel}[{EXTRAS}]"],
        base,
        env,
    )  # fmt: skip
    shop = InstalledShop(copy_project(base), env=env, python=python)
    (shop.path / "shop" / "settings_installed.py").write_text(SETTINGS_FILE)
    (shop.path / "shop" / "urls_installed.py").write_text(URLS_FILE)
    (shop.path / "render_pages.py").write_text(RENDER_SCRIPT)
    return shop


@mutation("pyproject.toml", find='"*" = ["templates/**/*", ', replace='"*" = [')
def test_the_installed_wheel_renders_every_page_of_the_apps(installed_shop: InstalledShop):
    """Mutation: drop ``templates/**/*`` from the package data (pyproject.toml) → red: the
    installed project migrates, then the sign-in page is ``TemplateDoesNotExist``."""
    shop = installed_shop
    venv = Path(shop.python).parent.parent
    shop.manage("migrate", "--no-input")
    out = shop.run(["python", "render_pages.py"])
    (line,) = [line for line in out.splitlines() if line.startswith("PAGES=")]
    seen = json.loads(line.removeprefix("PAGES="))

    assert Path(seen["tenancy"]).is_relative_to(venv), seen["tenancy"]
    assert not seen["farm"], "the farm is importable in the installed project"
    assert not [p for p in seen["sys_path"] if p and Path(p).resolve().is_relative_to(ROOT)]

    pages = seen["pages"]
    assert set(pages) == set(EXPECTED_PAGES)
    used: set[str] = set()
    for label, (status, template) in EXPECTED_PAGES.items():
        page = pages[label]
        assert page["status"] == status, (label, page)
        assert all(page["texts"].values()), (label, page["texts"])
        names = {name for name, _ in page["templates"]}
        assert template is None or template in names, (label, page["templates"])
        for name, origin in page["templates"]:
            if name in shipped("templates"):
                assert origin and Path(origin).is_relative_to(venv), (label, name, origin)
                used.add(name)
    # A template the apps add needs a page here: every one of them is rendered.
    assert used == set(shipped("templates"))

    assert "no issues" in shop.manage("check")
    shop.manage("makemigrations", "--check", "--dry-run")
    shop.manage("collectstatic", "--no-input")
    static_root = shop.path / "collected-static"
    missing = [name for name in shipped("static") if not (static_root / name).is_file()]
    assert missing == [], "static files of the apps not collected"
