"""``manage.py mcp_call``: one tool as one member, printed as a client would see it."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tests.factories import CustomerFactory, FarmFactory, MembershipFactory
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db(transaction=True)


def _call(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("mcp_call", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _member(roles: list[str]) -> Any:
    return MembershipFactory(tenant=FarmFactory(), roles=roles)


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_prints_the_result_a_client_would_receive(era: str) -> None:
    member = _member(["Admin"])
    CustomerFactory(farm=member.tenant, name="Acme Eggs Ltd")
    out, _ = _call(
        "cluck_list_customers",
        "--tenant",
        member.tenant.code,
        "--email",
        member.user.email.upper(),
        "--arguments",
        '{"search": "acme"}',
        "--era",
        era,
    )
    assert [c["name"] for c in json.loads(out)["customers"]] == ["Acme Eggs Ltd"]


def test_a_tool_error_prints_its_code_and_data_and_fails() -> None:
    member = _member(["Admin"])
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "mcp_call",
            "mcptest_record_note",
            tenant=member.tenant.code,
            email=member.user.email,
            arguments='{"text": 5, "idempotencyKey": "k"}',
            stdout=out,
            stderr=io.StringIO(),
        )
    assert raised.value.returncode == 1
    error = json.loads(out.getvalue())
    assert error["code"] == "Tool.InvalidArguments" and error["data"]["errors"]


@mutation(
    Edit(
        "mcp_tools/catalogue/surfaces.py",
        find="admitted = [spec for spec in specs if evaluate_role(spec.policy, actor)]",
        replace="admitted = list(specs)",
    ),
    Edit(
        "mcp_tools/methods/tools.py",
        find="return spec if evaluate(spec.policy, req.ctx.actor) else None",
        replace="return spec",
    ),
)
def test_a_refused_call_prints_the_json_rpc_error_and_fails() -> None:
    """ReadOnly is outside the farm's SalesFlow policy: the tool is hidden, so the call is
    -32602 as for an unknown tool. Mutation: stop filtering surfaces by role and drop the
    call-time policy check (its defense in depth) → the call runs → red."""
    member = _member(["ReadOnly"])
    out = io.StringIO()
    with pytest.raises(CommandError) as raised:
        call_command(
            "mcp_call",
            "cluck_list_customers",
            tenant=member.tenant.code,
            email=member.user.email,
            stdout=out,
            stderr=io.StringIO(),
        )
    assert raised.value.returncode == 2
    assert json.loads(out.getvalue())["error"]["code"] == -32602


def test_a_reused_idempotency_key_shows_the_replay() -> None:
    member = _member(["Admin"])
    args = ["mcptest_record_note", "--tenant", member.tenant.code, "--email", member.user.email]
    args += ["--arguments", '{"text": "hi"}', "--idempotency-key", "k-1"]
    first_out, first_err = _call(*args)
    again_out, again_err = _call(*args)
    assert json.loads(first_out)["replayed"] is False and "executed" in first_err
    assert json.loads(again_out)["replayed"] is True and "replayed" in again_err
    assert json.loads(again_out)["note_id"] == json.loads(first_out)["note_id"]


def test_an_unknown_member_is_a_command_error() -> None:
    member = _member(["Admin"])
    with pytest.raises(CommandError):
        _call("cluck_list_customers", "--tenant", member.tenant.code, "--email", "x@y.test")


@mutation(
    "mcp_tools/management/commands/mcp_call.py",
    find='path = options["path"] or mcp_path()',
    replace='path = options["path"] or "/mcp"',
)
def test_it_calls_the_endpoint_wherever_the_urlconf_mounts_it(settings: Any) -> None:
    """Issue 33: with ``mcp_tools.urls`` under a prefix, mcp_call posted to ``/mcp`` and died
    on the project's HTML 404. Mutation: post to ``/mcp`` whatever the URLconf says → red."""
    settings.ROOT_URLCONF = "tests.mcp_tools.urls_mounted_elsewhere"
    member = _member(["Admin"])
    CustomerFactory(farm=member.tenant, name="Acme Eggs Ltd")
    out, _ = _call("cluck_list_customers", "--tenant", member.tenant.code, "--email",
                   member.user.email)  # fmt: skip
    assert [c["name"] for c in json.loads(out)["customers"]] == ["Acme Eggs Ltd"]


def test_path_names_the_endpoint_and_a_project_without_one_is_told_to_mount_it(
    settings: Any,
) -> None:
    member = _member(["Admin"])
    args = ["cluck_list_customers", "--tenant", member.tenant.code, "--email", member.user.email]
    # --path wins over the URLconf's: here a path nothing serves (the farm's HTML 404).
    with pytest.raises(CommandError, match="/nowhere/mcp did not answer JSON-RPC"):
        _call(*args, "--path", "/nowhere/mcp")
    settings.ROOT_URLCONF = "tests.mcp_tools.urls_mounted_elsewhere"
    out, _ = _call(*args, "--path", "/elsewhere/mcp")
    assert "customers" in json.loads(out)
    settings.ROOT_URLCONF = "tests.testapps.idem.urls"
    with pytest.raises(CommandError, match=r"include\(\"mcp_tools.urls\"\)\) .*--path"):
        _call(*args)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@mutation(
    "mcp_tools/management/commands/mcp_call.py",
    find="            with _quiet_client_errors():\n",
    replace="            if True:\n",
)
def test_a_refused_call_logs_no_bad_request_line() -> None:
    """Issue 33: mcp_call printed a stray ``Bad Request: /mcp`` (Django's request logger on
    the endpoint's 4xx) before the error it prints itself. Mutation: call without quieting
    that logger → the warning is emitted → red."""
    member = _member(["Admin"])
    args = ["cluck_list_customers", "--tenant", member.tenant.code, "--email", member.user.email]
    records = _Records()
    logger = logging.getLogger("django.request")
    logger.addHandler(records)
    try:
        with pytest.raises(CommandError):
            _call("no_such_tool", *args[1:])
    finally:
        logger.removeHandler(records)
    assert [r.getMessage() for r in records.records if r.levelno >= logging.WARNING] == []
    assert logger.level == logging.NOTSET, "the logger's level is put back"
