"""What the reusable apps do for a project that is not the farm.

The farm hides these behind its own choices — it silences django-ratelimit's W001, installs its
own DRF exception handler and gives every tool a mirror — so they are pinned here, in-process,
with those choices taken away. ``tests/shop`` runs the same things end to end in a project of
its own.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings
from django_ratelimit.checks import check_caches
from rest_framework.test import APIClient

from mcp_tools import CallContext
from mcp_tools.authoring.reference import render_tool
from mcp_tools.authoring.registry import Registry
from tenancy.conf import install_counter_cache_default
from tests.mutations import mutation

UNLISTED = "django_ratelimit.W001"


@mutation(
    "tenancy/conf.py",
    find=(
        "    silenced = list(settings.SILENCED_SYSTEM_CHECKS)\n"
        "    if RATELIMIT_UNLISTED_BACKEND_CHECK not in silenced:\n"
        "        settings.SILENCED_SYSTEM_CHECKS = [*silenced, RATELIMIT_UNLISTED_BACKEND_CHECK]\n"
    ),
    replace="",
)
def test_tenancys_own_counter_cache_leaves_no_ratelimit_warning() -> None:
    """No ``RATELIMIT_USE_CACHE``: tenancy installs its counter cache, and django-ratelimit's
    only complaint about it — W001, "not on my list" — is silenced; no error remains.

    Mutation: drop the ``SILENCED_SYSTEM_CHECKS`` lines of ``install_counter_cache_default`` →
    red (and ``manage.py check`` of the shop prints the warning).
    """
    with override_settings(SILENCED_SYSTEM_CHECKS=[]):
        del settings.RATELIMIT_USE_CACHE
        install_counter_cache_default()
        reported = {message.id for message in check_caches(None)}
        assert settings.RATELIMIT_USE_CACHE == "tenancy_counters"
        assert reported - set(settings.SILENCED_SYSTEM_CHECKS) == set()


def test_a_projects_own_rate_cache_keeps_every_ratelimit_check() -> None:
    with override_settings(RATELIMIT_USE_CACHE="default", SILENCED_SYSTEM_CHECKS=[]):
        install_counter_cache_default()
        assert settings.SILENCED_SYSTEM_CHECKS == []


@mutation(
    "tenancy/api.py",
    find='raise LoginRateLimitedError(wait=max(1, int(usage["time_left"])))',
    replace='raise __import__("django_ratelimit.exceptions").exceptions.Ratelimited()',
)
@pytest.mark.django_db
@pytest.mark.parametrize("handler", ["DRF's default", "the farm's"])
def test_login_over_its_rate_is_429_whatever_the_exception_handler(handler: str) -> None:
    """Mutation: count logins with django-ratelimit's blocking decorator again (its
    ``Ratelimited`` is a Django ``PermissionDenied``) → red under DRF's default handler (403)."""
    rest = dict(settings.REST_FRAMEWORK)
    if handler == "DRF's default":
        rest.pop("EXCEPTION_HANDLER")
    client = APIClient(REMOTE_ADDR="203.0.113.9")
    body = {"farmCode": "nowhere", "email": "nobody@example.test", "password": "wrong"}
    with override_settings(TENANCY_LOGIN_RATE="1/h", REST_FRAMEWORK=rest):
        first = client.post("/api/v1/auth/login/", body, format="json")
        second = client.post("/api/v1/auth/login/", body, format="json")
    assert first.status_code == 401
    assert second.status_code == 429, second.content
    assert int(second["Retry-After"]) >= 1
    if handler == "the farm's":
        assert second.json()["code"] == "Http.RateLimited"


@mutation(
    "mcp_tools/authoring/reference.py",
    find="    elif spec.mirrors_no_route:  # mirrors= is optional: a tool may declare neither\n",
    replace="    else:\n",
)
def test_a_tool_without_a_mirror_declaration_is_documented_without_one() -> None:
    """``mirrors=`` is optional. Mutation: restore the unconditional
    ``mirrors no route ({spec.mirrors_no_route})`` line in ``render_tool`` → red ("None")."""
    registry = Registry()

    @registry.tool(name="plain_read", read_only=True, description="Reads a thing.")
    def plain_read(ctx: CallContext) -> str:
        return ""

    (spec,) = registry.specs()
    text = render_tool(spec)
    assert "None" not in text and "mirrors" not in text
