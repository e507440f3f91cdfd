"""tenancy marks its views for idempotency without importing it: the attribute names agree."""

from __future__ import annotations

import pytest
from django.test import override_settings

from idempotency import markers as idempotency_markers
from tenancy import markers as tenancy_markers
from tenancy.tokens import issue_token
from tests.mutations import mutation


@mutation(
    "idempotency/markers.py",
    find='NEVER_REPLAY = "idempotency_never_replay"',
    replace='NEVER_REPLAY = "idempotency_never_replayed"',
)
@mutation(
    "idempotency/markers.py",
    find='USER_SCOPED_KEYS = "idempotency_user_scoped_keys"',
    replace='USER_SCOPED_KEYS = "idempotency_keys_per_user"',
)
def test_tenancy_writes_the_attributes_idempotency_reads():
    """Mutation: rename ``NEVER_REPLAY`` or ``USER_SCOPED_KEYS`` in idempotency/markers.py → red."""
    assert tenancy_markers.IDEMPOTENCY_NEVER_REPLAY == idempotency_markers.NEVER_REPLAY
    assert tenancy_markers.IDEMPOTENCY_USER_SCOPED_KEYS == idempotency_markers.USER_SCOPED_KEYS


@mutation(
    "tenancy/api.py", find="@keys_per_user\nclass TokenRevokeApi", replace="class TokenRevokeApi"
)
@pytest.mark.django_db
@override_settings(IDEMPOTENCY_USER_SCOPED_PATH_PREFIXES=())
def test_a_key_on_a_me_write_is_the_members_own_wherever_tenancy_urls_is_mounted(member_client):
    """Keys on tenancy's /me writes are per user by view metadata, wherever the project mounts
    ``tenancy.urls`` — no path prefix needed.

    Mutation: drop ``@keys_per_user`` from ``TokenRevokeApi`` → red (the second member's
    request, same key, path and body, is answered 422 as a reused key).
    """
    first, first_membership = member_client()
    second, _ = member_client(farm=first_membership.tenant)
    token, _ = issue_token(membership=first_membership, name="revoke me")
    path = f"/api/v1/me/tokens/{token.pk}/"
    assert first.delete(path, HTTP_IDEMPOTENCY_KEY="same-key").status_code == 204
    # The second member's own request runs (and finds no token of theirs): never a reuse.
    answer = second.delete(path, HTTP_IDEMPOTENCY_KEY="same-key")
    assert answer.status_code == 404, answer.content
