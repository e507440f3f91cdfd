"""``manage.py add_member`` makes new users through the user model's own manager."""

from __future__ import annotations

import io
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tenancy.management.commands import add_member
from tenancy.models import Membership
from tests.factories import FarmFactory
from tests.mutations import mutation


class _EmailUserManager:
    """The manager of an email-only user model (no ``username``): ``create_user(email, ...)``
    normalises the address, as such managers do."""

    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []

    def filter(self, **lookup: Any) -> Any:
        return mock.Mock(first=mock.Mock(return_value=None))

    def create_user(self, email: str, password: str | None = None) -> Any:
        local, _, domain = email.partition("@")
        user = mock.Mock(email=f"{local}@{domain.upper()}", password=password)
        self.created.append({"email": email, "password": password})
        return user


class _EmailUser:
    """An ``AUTH_USER_MODEL`` keyed by email: ``USERNAME_FIELD = EMAIL_FIELD = "email"``."""

    USERNAME_FIELD = "email"
    EMAIL_FIELD = "email"
    _default_manager = _EmailUserManager()

    def __init__(self, **fields: Any) -> None:
        raise AssertionError(f"built without the manager's create_user: {fields}")

    @classmethod
    def get_email_field_name(cls) -> str:
        return cls.EMAIL_FIELD


@mutation(
    "tenancy/management/commands/add_member.py",
    find="    user = manager.create_user(**fields, password=password or None)",
    replace="    user = model(**fields)",
)
def test_a_new_user_of_an_email_only_user_model_is_made_by_its_create_user() -> None:
    """Mutation: build the user as ``model(**fields)`` (skipping the manager) → red."""
    _EmailUser._default_manager = manager = _EmailUserManager()
    with mock.patch.object(add_member, "get_user_model", return_value=_EmailUser):
        user, created = add_member._user("ana@shop.example", None)
    assert created
    # Keyed by USERNAME_FIELD/EMAIL_FIELD only (no ``username``), the manager's own normalising.
    assert manager.created == [{"email": "ana@shop.example", "password": None}]
    assert user.email == "ana@SHOP.EXAMPLE"


@pytest.mark.django_db
def test_add_member_creates_the_user_through_the_managers_create_user() -> None:
    farm = FarmFactory.create(code="north")
    manager_class = type(get_user_model()._default_manager)
    with mock.patch.object(
        manager_class, "create_user", autospec=True, side_effect=manager_class.create_user
    ) as create_user:
        call_command(
            "add_member",
            tenant="north",
            email="Ana@Example.test",
            role="Owner",
            stdout=io.StringIO(),
        )
    assert create_user.call_count == 1
    user = get_user_model()._default_manager.get(email="ana@example.test")
    assert not user.has_usable_password()  # no password given: tokens are the only way in
    assert Membership.objects.filter(user=user, tenant=farm).exists()


@pytest.mark.django_db
def test_a_password_from_stdin_is_set_through_create_user() -> None:
    FarmFactory.create(code="north")
    with mock.patch("sys.stdin", io.StringIO("s3cret-enough\n")):
        call_command(
            "add_member",
            tenant="north",
            email="bo@example.test",
            role="Owner",
            password_from_stdin=True,
            stdout=io.StringIO(),
        )
    user = get_user_model()._default_manager.get(email="bo@example.test")
    assert user.check_password("s3cret-enough")


@mutation(
    "tenancy/management/commands/add_member.py",
    find='        if options["verbosity"] < 1:',
    replace="        if False:",
)
@pytest.mark.django_db
def test_verbosity_0_prints_nothing_and_still_adds_the_member() -> None:
    """Issue 33: ``add_member`` ignored ``verbosity=0`` (``-v 0``), as scripts and
    ``call_command`` use to stay quiet. Mutation: print the line whatever the verbosity → red."""
    farm = FarmFactory.create(code="north")
    quiet, loud = io.StringIO(), io.StringIO()
    call_command("add_member", tenant="north", email="cy@example.test", role="Owner",
                 verbosity=0, stdout=quiet)  # fmt: skip
    call_command("add_member", tenant="north", email="cy@example.test", role="Owner",
                 stdout=loud)  # fmt: skip
    assert quiet.getvalue() == ""
    assert loud.getvalue().startswith("updated: cy@example.test is Owner")
    assert Membership.objects.filter(user__email="cy@example.test", tenant=farm).exists()
