"""``TENANCY_TENANT_ACTIVE_FIELD = None``: a tenant model without an active flag, always active."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tenancy import conf
from tenancy.checks import check_tenant_model
from tenancy.management.commands._tenant import tenant_by_code
from tenancy.oauth.pages import live_memberships
from tests.factories import DEFAULT_PASSWORD
from tests.mutations import mutation

pytestmark = pytest.mark.django_db

NO_FLAG = override_settings(TENANCY_TENANT_ACTIVE_FIELD=None)


@mutation(
    "tenancy/conf.py",
    find="    return True if field is None else bool(getattr(tenant, field))",
    replace="    return bool(getattr(tenant, field))",
)
def test_without_an_active_field_every_place_that_reads_it_admits_the_tenant(
    member_client, api_client
):
    """The farm's ``is_active`` is False but the setting says the model has no flag: the
    bearer, login, the OAuth grant choices and the commands all take the tenant as active.

    Mutation: read ``getattr(tenant, None)`` when the setting is None → red.
    """
    client, membership = member_client()
    farm = membership.tenant
    farm.is_active = False
    farm.save()
    with NO_FLAG:
        assert client.get("/api/v1/me/").status_code == 200
        login = api_client.post(
            "/api/v1/auth/login/",
            {"farmCode": farm.code, "email": membership.user.email, "password": DEFAULT_PASSWORD},
            format="json",
        )
        assert login.status_code == 200, login.content
        assert live_memberships(membership.user) == [membership]
        assert tenant_by_code(farm.code) == farm
    # The flag still counts where the setting names it.
    assert client.get("/api/v1/me/").status_code == 401
    assert not conf.tenant_is_active(farm)


@mutation(
    "tenancy/checks.py",
    find="        if field_name is None and optional:\n            continue\n",
    replace="",
)
def test_the_system_check_accepts_no_active_field_but_still_requires_a_code_field() -> None:
    """Mutation: check ``None`` like a field name → red (tenancy.E005 for a valid setting)."""
    with NO_FLAG:
        assert check_tenant_model() == []
    with override_settings(TENANCY_TENANT_ACTIVE_FIELD=None, TENANCY_TENANT_CODE_FIELD=None):
        assert [error.id for error in check_tenant_model()] == ["tenancy.E005"]
    with override_settings(TENANCY_TENANT_ACTIVE_FIELD="enabled"):
        assert [error.id for error in check_tenant_model()] == ["tenancy.E005"]
