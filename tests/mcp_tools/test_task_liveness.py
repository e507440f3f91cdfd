"""A task's worker applies the request path's liveness rule (issue 34, item 3).

Tasks are queued on a real server while their owners may act, the owners then stop being
allowed to (a deactivated user, a disabled membership, a suspended tenant), and only then does
a worker of the engine (``manage.py db_worker``, a ``celery worker``) run them: each task
fails with the error the owner's next ``/mcp`` request gets, and its write never happens.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.utils import timezone

from cluck.devredis import redis_server
from cluck.models import Farm
from mcp_tools.models import TaskRecord
from tenancy.models import AccessToken, Membership
from tests.a2a_tools.conftest import skill_message
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import HANDSHAKE
from tests.mcp_tools.test_task_engine import Engine, _create, _until
from tests.mutations import mutation
from tests.testapps.idem.models import SideEffect

pytestmark = [pytest.mark.e2e, pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _deactivate_user(membership: Membership) -> None:
    # ``update``: the user's flag alone (``save()`` would also move the credential epoch).
    user = membership.get_user()
    type(user)._default_manager.filter(pk=user.pk).update(is_active=False)


def _disable_member(membership: Membership) -> None:
    Membership.objects.filter(pk=membership.pk).update(disabled_at=timezone.now())


def _suspend_tenant(membership: Membership) -> None:
    Farm.objects.filter(pk=membership.get_tenant().pk).update(is_active=False)


def _revoke_token(membership: Membership) -> None:
    AccessToken.objects.filter(membership_id=membership.pk).update(revoked_at=timezone.now())


def _change_role(membership: Membership) -> None:
    membership.roles = ["Manager"]
    membership.save()


CAUSES: dict[str, tuple[Callable[[Membership], None], str]] = {
    "deactivated-user": (_deactivate_user, "Auth.AccountDisabled"),
    "disabled-member": (_disable_member, "Auth.CredentialsSuperseded"),
    "suspended-tenant": (_suspend_tenant, "Auth.TenantSuspended"),
    "revoked-token": (_revoke_token, "Auth.InvalidToken"),
    "changed-role": (_change_role, "Auth.CredentialsSuperseded"),
}


@pytest.fixture(params=["db", "celery"])
def db_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    # The rule is the worker's, not the queue's (test_task_engine runs every engine through
    # the same ``execute``): the database worker, and a Celery worker as the one process that
    # is neither the web process's code path nor a manage.py command.
    if request.param == "db":
        yield Engine("db", "redis://127.0.0.1:1/0", tmp_path)
        return
    with redis_server() as url:
        yield Engine("celery", url, tmp_path)


def _write(label: str) -> dict[str, Any]:
    return {"label": label, "idempotencyKey": uuid.uuid4().hex}


def _handshake_task(url: str, bearer: str, label: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "engine_write",
            "arguments": _write(label),
            "task": {"ttl": 60000},
        },
    }
    headers = {
        "Authorization": f"Bearer {bearer}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": HANDSHAKE,
    }
    answer = httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=30).json()
    return str(answer["result"]["task"]["taskId"])


def _a2a_task(url: str, bearer: str, label: str) -> str:
    params = {
        **skill_message("engine_write", {"label": label}, key=uuid.uuid4().hex),
        "configuration": {"returnImmediately": True},
    }
    response = httpx.post(
        f"{url}/a2a",
        json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params},
        headers={"Authorization": f"Bearer {bearer}", "A2A-Version": "1.0"},
        timeout=30,
    )
    return str(response.json()["result"]["task"]["id"])


def _refusal_code(url: str, bearer: str) -> str:
    """What the owner's next request is told (the request path's own decision)."""
    response = httpx.post(
        f"{url}/mcp",
        content=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        headers={
            "Authorization": f"Bearer {bearer}",
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": HANDSHAKE,
        },
        timeout=30,
    )
    assert response.status_code == 401, response.text
    return str(response.json()["error"]["data"]["code"])


@mutation(
    "mcp_tools/call/callers.py",
    find="    ensure_still_live(membership, credential_epoch=",
    replace="    (lambda *a, **k: None)(membership, credential_epoch=",
)
@mutation(
    "tenancy/tokens/__init__.py",
    find="membership.disabled_at is not None or not membership.get_user().is_active",
    replace="membership.disabled_at is not None",
)
@mutation(
    "tenancy/tokens/__init__.py",
    find="    if not conf.tenant_is_active(membership.get_tenant()):\n",
    replace="    if False:\n",
)
@mutation(
    "tenancy/tokens/__init__.py",
    find="        if token is None or not _usable(token, timezone.now()):\n",
    replace="        if token is None:\n",
)
@mutation(
    "mcp_tools/tasks/run.py",
    find="                credential_epoch=ctx.actor.credential_epoch,\n",
    replace="",
)
def test_a_queued_write_task_of_an_owner_no_longer_allowed_fails_and_never_writes(db_engine):
    """Write tasks of five owners, each queued in both MCP eras and as an A2A long-running
    skill, are run by a worker started only after the owner's user was deactivated, member
    disabled, tenant suspended, token revoked or role changed: every task fails with
    ``-32014`` and the code the owner's next request with that token is refused with, and
    none of the writes happened.

    Mutation: the worker skips the liveness rule, the rule forgets the user's active flag, the
    tenant's suspension or the token's revocation, or the task keeps no credential epoch →
    red (a task completes and its side-effect row exists, or fails with another code)."""
    owners: dict[str, Membership] = {
        cause: MembershipFactory.create(tenant=FarmFactory.create(), roles=["Admin"])
        for cause in CAUSES
    }
    bearers = {cause: bearer_for(member) for cause, member in owners.items()}
    queued: dict[str, tuple[str, str]] = {}  # label → (cause, task id)
    with db_engine.server() as url:
        for cause, bearer in bearers.items():
            tag = uuid.uuid4().hex[:8]
            for era, start in (
                ("modern", lambda b, label: _create(url, b, "engine_write", _write(label))),
                ("handshake", lambda b, label: _handshake_task(url, b, label)),
                ("a2a", lambda b, label: _a2a_task(url, b, label)),
            ):
                label = f"{cause}-{era}-{tag}"
                queued[label] = (cause, start(bearer, label))
        for cause, member in owners.items():
            CAUSES[cause][0](member)
        refused = {cause: _refusal_code(url, bearer) for cause, bearer in bearers.items()}
        with db_engine.worker():

            def settled() -> bool:
                ids = [task_id for _, task_id in queued.values()]
                return not TaskRecord.objects.filter(
                    task_id__in=ids, status__in=("working", "input_required")
                ).exists()

            _until(settled, "every task to settle")
    assert refused == {cause: code for cause, (_, code) in CAUSES.items()}
    for label, (cause, task_id) in queued.items():
        task = TaskRecord.objects.get(task_id=task_id)
        assert task.status == "failed", (label, task.status, task.result)
        error = task.error or {}
        assert error.get("code") == -32014, (label, error)
        assert error.get("data", {}).get("code") == refused[cause], (label, error)
        assert not SideEffect.objects.filter(label=label).exists(), label
