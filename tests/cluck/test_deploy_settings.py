"""No committed SECRET_KEY; production refuses to start without one; API docs need no CDN."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from tests.mutations import mutation

ROOT = Path(__file__).resolve().parents[2]


def _settings_in_subprocess(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    environment.update(DATABASE_URL="sqlite:///:memory:", **env)
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); print('started')"],
        cwd=ROOT,
        env={**environment, "DJANGO_SETTINGS_MODULE": "cluck.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@mutation(
    "cluck/settings.py",
    find="    if set(ALLOWED_HOSTS) - set(LOOPBACK_HOSTS):\n        from django.core.exceptions",
    replace="    if False:\n        from django.core.exceptions",
)
def test_a_server_for_a_public_host_refuses_to_start_without_secret_key() -> None:
    """Mutation: fall back to the generated key whatever ALLOWED_HOSTS says → red."""
    result = _settings_in_subprocess(ALLOWED_HOSTS="farm.example.com")
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr
    assert (
        "started"
        in _settings_in_subprocess(ALLOWED_HOSTS="farm.example.com", SECRET_KEY="x" * 60).stdout
    )


@mutation(
    "cluck/settings.py",
    find='SECRET_KEY = os.environ.get("SECRET_KEY", "")',
    replace='SECRET_KEY = os.environ.get("SECRET_KEY", "cluck-dev-insecure-" + "k" * 50)',
)
def test_a_loopback_install_generates_its_own_private_key() -> None:
    """Mutation: restore the committed default key → red (no key file)."""
    assert "cluck-dev-insecure" not in settings.SECRET_KEY
    if "SECRET_KEY" in os.environ:
        pytest.skip("SECRET_KEY set by the environment")
    path = settings.SECRET_KEY_FILE
    assert path is not None and path.read_text().strip() == settings.SECRET_KEY
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(settings.SECRET_KEY) >= 50


@mutation("cluck/settings.py", find='    "SWAGGER_UI_DIST": "SIDECAR",\n', replace="")
@pytest.mark.django_db
def test_swagger_ui_and_redoc_load_their_assets_from_this_server() -> None:
    """Mutation: drop ``SWAGGER_UI_DIST = "SIDECAR"`` → red (swagger-ui-dist@latest, a CDN)."""
    client = Client()
    for page in ("/api/docs/", "/api/redoc/"):
        html = client.get(page).content.decode()
        assert "cdn.jsdelivr.net" not in html and "@latest" not in html, page
        assert "/static/drf_spectacular_sidecar/" in html, page
    asset = client.get("/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert asset.status_code == 200
