"""``manage.py issue_token``: only the raw token on stdout; every problem a CommandError."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse
from rest_framework.test import APIClient

from tenancy.models import AccessToken
from tenancy.tokens import looks_like_token
from tests.factories import MembershipFactory, provisioned_farm

pytestmark = pytest.mark.django_db


def test_issue_token_prints_only_a_working_token() -> None:
    farm = provisioned_farm()
    membership = MembershipFactory.create(
        tenant=farm, roles=["ReadOnly"], user__email="pat@example.test", user__password=None
    )
    out = StringIO()

    call_command(
        "issue_token",
        "--farm",
        farm.code,
        "--email",
        "PAT@example.test",
        "--expires-days",
        "7",
        stdout=out,
    )

    raw = out.getvalue().strip()
    assert out.getvalue().count("\n") == 1 and looks_like_token(raw)
    token = AccessToken.objects.get(membership=membership)
    assert token.name == "cli token" and token.expires_at is not None
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get(reverse("flock-list")).status_code == 200


@pytest.mark.parametrize(
    "args",
    [
        ["--farm", "nowhere", "--email", "pat@example.test"],
        ["--email", "stranger@example.test"],
        ["--email", "pat@example.test", "--expires-days", "0"],
        ["--email", "pat@example.test", "--name", " "],
    ],
    ids=["unknown farm", "not a member", "bad expiry", "blank name"],
)
def test_issue_token_refuses_with_a_command_error_and_issues_nothing(args: list[str]) -> None:
    farm = provisioned_farm()
    MembershipFactory.create(tenant=farm, user__email="pat@example.test", user__password=None)
    if "--farm" not in args:
        args = ["--farm", farm.code, *args]
    out = StringIO()

    with pytest.raises(CommandError):
        call_command("issue_token", *args, stdout=out)

    assert out.getvalue() == ""
    assert not AccessToken.objects.exists()
