"""No committed SECRET_KEY; production refuses to start without one; API docs need no CDN."""

from __future__ import annotations

import json
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


def _settings_in_subprocess(
    code: str = "print('started')", **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    environment.update(DATABASE_URL="sqlite:///:memory:", **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
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


# One call record, written the way mcp_tools.observability writes them.
_LOG_A_CALL = (
    "import logging; logging.getLogger('mcp_tools.calls').warning("
    "'tools/call x -> rate_limited', extra={'outcome': 'rate_limited', 'tenant_id': 7})"
)


@mutation(
    "cluck/settings.py",
    find=(
        '            **({"formatter": "json"} if os.environ.get("CLUCK_LOG_FORMAT") == "json" '
        "else {}),\n"
    ),
    replace="",
)
def test_cluck_log_format_json_writes_each_record_as_one_json_line() -> None:
    """The per-call records included, with their fields as keys. Mutation: drop the
    ``CLUCK_LOG_FORMAT`` switch from the console handler in ``LOGGING`` → red (plain text)."""
    plain = _settings_in_subprocess(_LOG_A_CALL, CLUCK_LOG_FORMAT="")
    assert plain.returncode == 0, plain.stderr
    assert plain.stderr.strip() == "tools/call x -> rate_limited"
    lines = _settings_in_subprocess(_LOG_A_CALL, CLUCK_LOG_FORMAT="json").stderr.splitlines()
    (record,) = (json.loads(line) for line in lines)
    assert record["logger"] == "mcp_tools.calls" and record["level"] == "WARNING"
    assert (record["outcome"], record["tenant_id"], record["service"]) == (
        "rate_limited",
        7,
        "cluck",
    )


def production_environment() -> dict[str, str]:
    """The production environment docs/deploying.md lists (its ``production-env`` block)."""
    text = (ROOT / "docs" / "deploying.md").read_text()
    block = text.split("<!-- production-env -->", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    environment = {}
    for line in block.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, value = line.split("=", 1)
            environment[name] = value
    return environment


@mutation(
    "cluck/settings.py",
    find='SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", _HTTPS)',
    replace='SESSION_COOKIE_SECURE = _env_bool("SESSION_COOKIE_SECURE", False)',
)
@mutation(
    "cluck/settings.py",
    find='CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", _HTTPS)',
    replace='CSRF_COOKIE_SECURE = _env_bool("CSRF_COOKIE_SECURE", False)',
)
@mutation(
    "cluck/settings.py",
    find="365 * 24 * 3600 if _HTTPS else 0",
    replace="0",
)
@mutation(
    "cluck/settings.py",
    find='SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", _HTTPS)',
    replace='SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", False)',
)
def test_check_deploy_is_clean_with_the_documented_production_environment() -> None:
    """``manage.py check --deploy --fail-level WARNING`` in the environment deploying.md lists.
    Mutations: no secure session cookie (W012), no secure CSRF cookie (W016), no HSTS (W004),
    no https redirect (W008) by default → red."""
    environment = production_environment()
    assert environment["CLUCK_PUBLIC_URL"].startswith("https://")
    # The documented secret is a placeholder; any 50+ random characters will do.
    environment["SECRET_KEY"] = "k3" * 30 + "Zq!"
    environment.pop("DATABASE_URL", None)  # checks never connect; sqlite stands in
    code = (
        "from django.conf import settings; from django.core.management import call_command; "
        # sqlite standing in for PostgreSQL is what tenancy_rls.W001 would say under CLUCK_RLS.
        "settings.SILENCED_SYSTEM_CHECKS = [*settings.SILENCED_SYSTEM_CHECKS, "
        "'tenancy_rls.W001']; "
        "call_command('check', deploy=True, fail_level='WARNING')"
    )
    result = _settings_in_subprocess(code, **environment)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout + result.stderr


_HEADERS_OF = (
    "from django.test import Client; r = Client().get('/oauth/sign-in/'); "
    "print(r.get('Content-Security-Policy')); print(r.get('Content-Security-Policy-Report-Only'))"
)


def test_the_content_security_policy_comes_from_the_environment() -> None:
    default = _settings_in_subprocess(_HEADERS_OF).stdout.splitlines()
    assert "frame-ancestors 'none'" in default[0] and "script-src 'self'" in default[0]
    assert "unsafe-inline" not in default[0].split("script-src", 1)[1].split(";", 1)[0]
    assert default[1] == "None"
    chosen = _settings_in_subprocess(_HEADERS_OF, CLUCK_CSP="default-src 'none'").stdout
    assert chosen.splitlines() == ["default-src 'none'", "None"]
    reported = _settings_in_subprocess(
        _HEADERS_OF, CLUCK_CSP="default-src 'self'", CLUCK_CSP_REPORT_ONLY="1"
    ).stdout
    assert reported.splitlines() == ["None", "default-src 'self'"]
    assert _settings_in_subprocess(_HEADERS_OF, CLUCK_CSP="").stdout.splitlines() == [
        "None",
        "None",
    ]
