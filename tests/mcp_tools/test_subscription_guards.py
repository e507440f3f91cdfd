"""``subscriptions/listen`` under attack (issue 34, items 4 and 5), on the farm on uvicorn.

Item 4: a subscription is taken only for a URI its caller could read now, row scope included,
and a change reaches a stream only while its caller may still see it. Item 5: an open stream
ends, with the error its caller's next request gets, within a few seconds of that caller's
token being revoked, role changed, tenant suspended, user deactivated or membership disabled.

Changes are published from this test process (another "replica"): they reach the server only
through the shared change table, as in ``test_subscriptions``.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from django.utils import timezone

from cluck.models import Farm, Flock, WorkerAssignment
from mcp_tools.subscriptions.bus import notify_resource_updated
from tenancy.models import Membership
from tenancy.services import membership_set_roles
from tenancy.tokens import issue_token
from tests.factories import (
    FarmFactory,
    FlockFactory,
    MembershipFactory,
    bearer_for,
    provisioned_farm,
)
from tests.mcp_tools.conftest import MODERN, modern_meta
from tests.mcp_tools.servers import ServerURL, serve
from tests.mcp_tools.test_subscriptions import (
    ACK,
    QUIET_SECONDS,
    Stream,
    listening,
    owner_records,
    read_error,
    refused_listen,
)
from tests.mutations import mutation

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

# Issue 34's bound on how long a refused caller's stream may go on (the server's re-check is
# every 2 s, MCP_TOOLS_LISTEN_RECHECK_SECONDS, plus a poll round).
END_WITHIN_SECONDS = 5.0
# Long enough for the server's poller to have judged every stream's caller again.
RECHECKED_AFTER_SECONDS = 4.0


@pytest.fixture(scope="module")
def server(django_db_setup: Any) -> Iterator[ServerURL]:
    with serve("uvicorn", env={"MCP_TOOLS_SUBSCRIPTIONS": "1"}) as url:
        yield url


@pytest.fixture(autouse=True)
def _fast_hashing(settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- item 4: row scope ----------------------------------------------------------------------


def _worker_of(farm: Farm, flocks: list[Flock]) -> Membership:
    worker: Membership = MembershipFactory.create(tenant=farm, roles=[])  # no role: a Worker
    for flock in flocks:
        WorkerAssignment.all_tenants.create(farm=farm, membership=worker, flock=flock)
    return worker


@mutation(
    "mcp_tools/methods/subscriptions.py",
    find="            if not allowed:",
    replace="            if False:",
)
@mutation(
    "mcp_tools/methods/subscriptions.py",
    find="            if row_key not in {str(row) for row in scope.row_ids}:\n"
    "                return False\n",
    replace="            pass\n",
)
@mutation(
    "cluck/resource_changes.py",
    find='notify_resource_updated(f"farm://days/{date.isoformat()}", tenant=farm, row=flock_id)',
    replace='notify_resource_updated(f"farm://days/{date.isoformat()}", tenant=farm)',
)
def test_a_worker_of_flock_1_is_told_nothing_of_flock_2(server):
    """Issue 34's reproduction: a worker assigned to flock 1 (reading ``farm://flocks/2`` is
    "Resource not found") asks to be told of ``farm://flocks/2`` and of today's
    ``farm://days/…``; the owner records an entry of flock 2, then one of flock 1.

    The listen for flock 2 is refused with the read's own error; the stream for the day hears
    only flock 1's entry. Mutation: the listen takes URIs without reading them (flock 2's
    listen opens), delivery skips the row-scope check or the farm announces the day's change
    without its flock (the day's stream hears flock 2's entry) → red."""
    farm = provisioned_farm()
    flock_1: Flock = FlockFactory.create(farm=farm)
    flock_2: Flock = FlockFactory.create(farm=farm)
    bearer = bearer_for(_worker_of(farm, [flock_1]))
    day = farm.today()
    hidden = f"farm://flocks/{flock_2.pk}"
    refused = refused_listen(server, bearer, {"resourceSubscriptions": [hidden]})
    assert refused["error"] == read_error(server, bearer, hidden)
    assert refused["error"]["data"] == {"uri": hidden}
    day_uri, own = f"farm://days/{day.isoformat()}", f"farm://flocks/{flock_1.pk}"
    with listening(server, bearer, {"resourceSubscriptions": [day_uri, own]}) as stream:
        assert stream.next()["method"] == ACK
        owner_records(farm, flock_2, day)
        assert stream.silent_for(QUIET_SECONDS)
        owner_records(farm, flock_1, day)
        # Changes are delivered in the order they were written: a leak of flock 2's day
        # would come first.
        heard = [stream.next()["params"]["uri"], stream.next()["params"]["uri"]]
    assert sorted(heard) == sorted([day_uri, own])


@mutation(
    "mcp_tools/methods/subscriptions.py",
    find="            self._verdicts[uri] = verdict",
    replace="            self._verdicts[uri] = True",
)
@mutation(
    "mcp_tools/subscriptions/bus.py",
    find="            listener.caller = listener.recheck()",
    replace="            listener.recheck()",
)
def test_a_change_reaches_a_stream_only_while_its_caller_may_read_it(server):
    """A worker of flocks 1 and 2 listens to both record cards and hears flock 2's entry;
    flock 2 is then unassigned. Once the server has judged the stream's caller again, a change
    of ``farm://flocks/2`` (announced without a row: only the URI's read can stop it) and a
    new entry of flock 2 are not delivered; flock 1's still is.

    Mutation: delivery does not read the URI again, or the re-check does not hand the
    stream its caller's new row scope → flock 2's change is delivered → red."""
    farm = provisioned_farm()
    flock_1: Flock = FlockFactory.create(farm=farm)
    flock_2: Flock = FlockFactory.create(farm=farm)
    worker = _worker_of(farm, [flock_1, flock_2])
    day = farm.today() - dt.timedelta(days=1)
    one, two = f"farm://flocks/{flock_1.pk}", f"farm://flocks/{flock_2.pk}"
    with listening(server, bearer_for(worker), {"resourceSubscriptions": [one, two]}) as stream:
        assert stream.next()["method"] == ACK
        owner_records(farm, flock_2, day)
        assert stream.next()["params"]["uri"] == two
        WorkerAssignment.all_tenants.filter(membership=worker, flock=flock_2).delete()
        time.sleep(RECHECKED_AFTER_SECONDS)
        notify_resource_updated(two, tenant=farm)
        owner_records(farm, flock_2, day + dt.timedelta(days=-1))
        owner_records(farm, flock_1, day)
        assert stream.next()["params"]["uri"] == one
        assert stream.silent_for(QUIET_SECONDS)


# --- item 5: streams of refused callers end -------------------------------------------------


def _revoke_token(url: str, membership: Membership, token_id: int, bearer: str) -> None:
    # The member's own REST call, as issue 34 did it.
    response = httpx.delete(
        f"{url}/api/v1/me/tokens/{token_id}/",
        headers={"Authorization": f"Bearer {bearer}", "Idempotency-Key": f"revoke-{token_id}"},
        timeout=30,
    )
    assert response.status_code == 204, response.text


def _change_role(url: str, membership: Membership, token_id: int, bearer: str) -> None:
    membership_set_roles(membership=membership, roles=["Manager"])


def _suspend_tenant(url: str, membership: Membership, token_id: int, bearer: str) -> None:
    Farm.objects.filter(pk=membership.get_tenant().pk).update(is_active=False)


def _deactivate_user(url: str, membership: Membership, token_id: int, bearer: str) -> None:
    # ``update``: the user's flag alone (``save()`` would also move the credential epoch).
    user = membership.get_user()
    type(user)._default_manager.filter(pk=user.pk).update(is_active=False)


def _disable_member(url: str, membership: Membership, token_id: int, bearer: str) -> None:
    Membership.objects.filter(pk=membership.pk).update(disabled_at=timezone.now())


CAUSES: dict[str, Callable[[str, Membership, int, str], None]] = {
    "revoked-token": _revoke_token,
    "changed-role": _change_role,
    "suspended-tenant": _suspend_tenant,
    "deactivated-user": _deactivate_user,
    "disabled-member": _disable_member,
}


def _next_request_error(url: str, bearer: str) -> dict[str, Any]:
    """The error the caller's next request with that token gets (the request path's)."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    message["params"] = {"_meta": modern_meta()}
    response = httpx.post(
        f"{url}/mcp",
        content=json.dumps(message),
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/list",
        },
        timeout=30,
    )
    assert response.status_code == 401, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def _last_message(stream: Stream, within: float) -> tuple[dict[str, Any], float]:
    """The first message that is not a change, and how long it took to come."""
    started = time.monotonic()
    while True:
        message = stream.next(timeout=max(0.1, within + 5 - (time.monotonic() - started)))
        if "method" not in message:
            return message, time.monotonic() - started


@mutation(
    "mcp_tools/call/callers.py",
    find="    ensure_still_live(membership, credential_epoch=",
    replace="    (lambda *a, **k: None)(membership, credential_epoch=",
)
@mutation(
    "mcp_tools/subscriptions/bus.py",
    find="                    _recheck(listeners)\n",
    replace="                    pass\n",
)
@mutation(
    "mcp_tools/methods/subscriptions.py",
    find="            if method == notifications.ENDED:",
    replace="            if False:",
)
@mutation(
    "mcp_tools/conf.py",
    find='    "LISTEN_RECHECK_SECONDS": 2.0,',
    replace='    "LISTEN_RECHECK_SECONDS": 30.0,',
)
@mutation(
    "tenancy/tokens/__init__.py",
    find="membership.disabled_at is not None or not membership.get_user().is_active",
    replace="membership.disabled_at is not None",
)
@pytest.mark.parametrize("cause", list(CAUSES))
def test_an_open_stream_ends_within_seconds_when_its_caller_is_refused(server, cause):
    """A member listens; then their token is revoked (``DELETE /api/v1/me/tokens/<id>/``),
    their role changed, their tenant suspended, their user deactivated or their membership
    disabled. Within 5 s the stream's last message is the JSON-RPC error (-32014, with
    ``data.code``) the member's next request with that token gets, and the stream ends.

    Mutation: the re-check skips the liveness rule, the poller never re-checks, the stream
    ignores the end, the re-check comes every 30 s, or the rule forgets the user's active
    flag → the stream goes on past 5 s (or ends otherwise) → red."""
    farm = FarmFactory.create()
    membership: Membership = MembershipFactory.create(tenant=farm, roles=["Admin"])
    token, bearer = issue_token(membership=membership, name="listener")
    with listening(server, bearer, {"toolsListChanged": True}, request_id="l-1") as stream:
        assert stream.next()["method"] == ACK
        CAUSES[cause](server, membership, token.pk, bearer)
        last, took = _last_message(stream, END_WITHIN_SECONDS)
        assert last["id"] == "l-1"
        assert last["error"] == _next_request_error(server, bearer)
        assert last["error"]["code"] == -32014
        assert took <= END_WITHIN_SECONDS, f"the stream went on for {took:.1f} s"
        stream.closed(timeout=5)
