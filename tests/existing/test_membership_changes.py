"""orgs.Membership is the toolkit's membership: a change to a row, by any ORM path, applies to
the very next MCP call; removing the row ends access."""

from __future__ import annotations

import pytest

from tests.existing.conftest import Guided
from tests.existing.harness import (
    issue_token,
    listed_tools,
    orm,
    refusal_code,
    rpc,
    seed,
)
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e]

ARCHIVE = "tracker_archive_project"
DANA = "dana@acme.example"  # the guide's add_member: an admin of acme


@mutation(
    "tenancy/models.py",
    find="        if self.model.epoch_field_names() & kwargs.keys()",
    replace="        if Membership.epoch_field_names() & kwargs.keys()",
)
@mutation(
    "tenancy/models.py",
    find='        names = (cls.USER_FIELD, cls.TENANT_FIELD, cls.ROLE_FIELD, "disabled_at")',
    replace='        names = (cls.USER_FIELD, cls.TENANT_FIELD, "disabled_at")',
)
def test_role_changes_and_removal_apply_to_the_next_call(
    guided_tracker: Guided, tracker_servers: dict[str, str]
) -> None:
    """A role changed in the project's own table ends the old role's tokens on the next call.

    Mutations: ``update()`` watches tenancy's own membership fields instead of the project's
    (``role`` is not ``roles``) → the old owner token lives on; ``save()`` does not watch the
    role field → the same. Each turns the ``Auth.CredentialsSuperseded`` expectation red.
    """
    tracker, url = guided_tracker.tracker, tracker_servers["uvicorn"]
    (owner,) = seed(tracker, [("acme", "eve@acme.example", "owner")]).values()
    assert ARCHIVE in listed_tools(url, owner)

    # A save that changes no role keeps the token (the epoch moves only when it must).
    orm(tracker, "m = Membership.objects.get(user__email='eve@acme.example'); m.save()")
    assert ARCHIVE in listed_tools(url, owner)

    # ORM save of a new role: the very next call with the old token is refused.
    orm(
        tracker,
        "m = Membership.objects.get(user__email='eve@acme.example')\n"
        "m.role = Membership.Role.MEMBER\n"
        "m.save()",
    )
    assert refusal_code(rpc(url, owner, "tools/list")) == "Auth.CredentialsSuperseded"
    member = issue_token(tracker, "acme", "eve@acme.example")
    assert ARCHIVE not in listed_tools(url, member)
    hidden = rpc(url, member, "tools/call", {"name": ARCHIVE, "arguments": {"projectId": 1}})
    assert hidden.status_code == 200 and hidden.json()["error"]["code"] == -32602, hidden.text

    # QuerySet.update(): the same.
    orm(tracker, "Membership.objects.filter(user__email='eve@acme.example').update(role='owner')")
    assert refusal_code(rpc(url, member, "tools/list")) == "Auth.CredentialsSuperseded"
    owner_again = issue_token(tracker, "acme", "eve@acme.example")
    assert ARCHIVE in listed_tools(url, owner_again)

    # The row removed: no access at all.
    orm(tracker, "Membership.objects.filter(user__email='eve@acme.example').delete()")
    assert refusal_code(rpc(url, owner_again, "tools/list")) in {
        "Auth.InvalidToken",
        "Auth.CredentialsSuperseded",
    }


def test_add_member_works_with_the_email_user_model(guided_tracker: Guided) -> None:
    added = guided_tracker.output_of("python", "manage.py", "add_member")
    assert f"added: {DANA} (new user) is admin in the organization acme" in added, added
    # The user came from the project's own UserManager.create_user: a real row of accounts.User
    # with no usable password, and the membership row is the project's own.
    shown = orm(
        guided_tracker.tracker,
        f"m = Membership.objects.get(user__email={DANA!r})\n"
        "print(type(m.user).__name__, m.user.has_usable_password(), m.organization.slug, m.role)",
    )
    assert "User False acme admin" in shown, shown
    assert guided_tracker.token(DANA, "acme").startswith("ck_pat_")
