"""A project's own membership table (``AbstractMembership``): its field names, one role column,
and the credential epoch on every ORM write path, as for tenancy's own table.

The end-to-end proof — a role changed in the project's table ends the old role on the next
MCP call — runs in ``tests/existing/``, a project whose ``TENANCY_MEMBERSHIP_MODEL`` names it.
"""

from __future__ import annotations

import pytest
from django.test import override_settings

from tenancy.checks import check_membership_model
from tests.factories import FarmFactory, UserFactory
from tests.mutations import mutation
from tests.testapps.members.models import TeamMembership

pytestmark = pytest.mark.django_db


def _member(role: str = "Worker") -> TeamMembership:
    return TeamMembership.objects.create(
        user=UserFactory.create(), organisation=FarmFactory.create(), role=role
    )


def test_the_named_fields_are_read_through_the_base():
    membership = _member("Manager")
    assert membership.get_roles() == ("Manager",)
    assert membership.get_tenant() == membership.organisation
    assert membership.get_user() == membership.user
    assert membership.effective_role.name == "Manager"
    membership.set_roles([])
    assert membership.role == "" and membership.get_roles() == ()
    with pytest.raises(ValueError, match="holds one role"):
        membership.set_roles(["Manager", "Worker"])


def _epoch(membership: TeamMembership) -> int:
    membership.refresh_from_db(fields=["credential_epoch"])
    return membership.credential_epoch


@mutation(
    "tenancy/models.py",
    find="        if self.model.epoch_field_names() & kwargs.keys()",
    replace="        if Membership.epoch_field_names() & kwargs.keys()",
)
def test_a_role_written_by_update_ends_the_old_tokens():
    """``QuerySet.update(role=…)`` on the project's table bumps the epoch by its own field
    name. Mutation: watch tenancy's own membership's fields (``roles``, ``tenant``) → red."""
    membership = _member()
    TeamMembership.objects.filter(pk=membership.pk).update(role="Manager")
    assert _epoch(membership) == 2
    TeamMembership.objects.filter(pk=membership.pk).update(organisation=FarmFactory.create())
    assert _epoch(membership) == 3
    TeamMembership.objects.filter(pk=membership.pk).update(note="not a credential field")
    assert _epoch(membership) == 3


@mutation(
    "tenancy/models.py",
    find='        names = (cls.USER_FIELD, cls.TENANT_FIELD, cls.ROLE_FIELD, "disabled_at")\n'
    "        fields =",
    replace='        names = (cls.USER_FIELD, cls.TENANT_FIELD, "disabled_at")\n        fields =',
)
def test_a_role_written_by_save_ends_the_old_tokens():
    """``save()`` (the admin, forms) of a changed role bumps the epoch; other fields do not.
    Mutation: leave the role column out of the watched ones → red."""
    membership = _member()
    membership.note = "renamed"
    membership.save()
    assert _epoch(membership) == 1
    membership.role = "Manager"
    membership.save()
    assert _epoch(membership) == 2
    membership.role = "Worker"
    membership.save(update_fields=["role"])
    assert _epoch(membership) == 3


def test_the_check_names_a_field_the_model_does_not_have():
    with override_settings(TENANCY_MEMBERSHIP_MODEL="members_testapp.TeamMembership"):
        assert check_membership_model() == []
    with override_settings(TENANCY_MEMBERSHIP_MODEL="members_testapp.MisnamedMembership"):
        errors = check_membership_model()
    assert [error.id for error in errors] == ["tenancy.E009"]
    assert "TENANT_FIELD = 'organization'" in errors[0].msg
    with override_settings(TENANCY_MEMBERSHIP_MODEL="auth.User"):
        assert [error.id for error in check_membership_model()] == ["tenancy.E008"]
