"""MCP argument fuzzing: every project tool, arguments generated from its published
``inputSchema`` (issue 12).

For each tool registered by the project (the registry minus the test apps' fixture tools, which
crash, block or refuse on purpose), over ``/mcp`` as a farm Owner:

- **valid** arguments (``hypothesis-jsonschema`` from the schema, some values swapped for ids
  and names that exist on the farm, so calls also succeed): the reply is a success, or an
  error whose code the tool reference lists for that tool (``ToolSpec.error_codes``); a
  ``Tool.InvalidArguments`` is only ever the documented boundary rule (NUL in a string);
- **invalid** arguments (a valid instance with one value replaced, one required property
  dropped or one unknown property added, kept only if the schema refuses it): the reply is
  ``Tool.InvalidArguments``.

Never ``Tool.InternalError``, never a 5xx, never a JSON-RPC error. Every refused call writes
nothing: the farm's audit rows (the proof of a side effect), idempotency claims, entries, lots
and bird movements are counted before and after it.

Bounded for CI: ``CLUCK_FUZZ_EXAMPLES`` examples per tool and kind (default 25), derandomized
(set ``CLUCK_FUZZ_RANDOM=1`` to explore). The counts are printed at the end (``-s``).
"""

from __future__ import annotations

import collections
import copy
import datetime as dt
import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from cluck.caller import Caller
from cluck.models import AuditEvent, BirdMovement, DailyEntry, EggGrade, EggLot, Farm
from cluck.services.daily_entries import daily_entry_record
from cluck.services.orders import OrderLineInput, sales_order_confirm, sales_order_create
from idempotency.models import IdempotencyRecord
from mcp_tools.authoring.registry import default_registry
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.execution import CODE_INTERNAL, CODE_INVALID_ARGUMENTS
from tests.cluck.mcp_helpers import Tools
from tests.factories import (
    CustomerFactory,
    FlockFactory,
    MembershipFactory,
    SaleGradeFactory,
    bearer_for,
    provisioned_farm,
    sellable_lot,
)
from tests.mcp_tools.schema_walk import validator
from tests.mutations import mutation

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

EXAMPLES = int(os.environ.get("CLUCK_FUZZ_EXAMPLES", "25"))
DERANDOMIZE = os.environ.get("CLUCK_FUZZ_RANDOM") != "1"
BOUNDARY_CODES = {"string_contains_nul", "string_not_unicode"}
PROJECT_TOOLS = [
    spec for spec in default_registry.specs() if not spec.fn.__module__.startswith("tests.")
]
# hypothesis-jsonschema resolves $refs in the schema it is given, in place: it only ever gets
# a copy of a tool's published inputSchema.
COUNTS: collections.Counter[str] = collections.Counter()


@pytest.fixture(scope="module")
def world(django_db_setup: Any, django_db_blocker: Any) -> Iterator[dict[str, Any]]:
    """A committed farm (tools run in worker threads on their own connections), an Owner's
    bearer, and the ids and names that exist, to steer generated values onto real rows."""
    with django_db_blocker.unblock():
        farm = provisioned_farm()
        grade = SaleGradeFactory.create(farm=farm)
        sellable_lot(
            grade=grade, quantity=10_000, production_date=farm.today() - dt.timedelta(days=3)
        )
        customer = CustomerFactory.create(farm=farm)
        caller = Caller.system(farm, label="test:fuzz")
        order = sales_order_create(
            caller=caller,
            customer_id=customer.pk,
            lines=[OrderLineInput(egg_grade_id=grade.pk, quantity=5, unit_price="2.00")],
        )
        sales_order_confirm(caller=caller, order_id=order.pk)
        flock = FlockFactory.create(
            farm=farm, placement_date=farm.today() - dt.timedelta(days=40), initial_count=500
        )
        entry = daily_entry_record(
            caller=caller,
            flock_id=flock.pk,
            date=farm.today() - dt.timedelta(days=5),
            total_eggs=0,
            cracked_eggs=0,
            dirty_eggs=0,
            mortality_count=1,
        ).entry
        membership = MembershipFactory.create(tenant=farm, roles=["Admin"], user__password=None)
        bearer = bearer_for(membership)
        grades = list(EggGrade.objects.for_tenant(farm).values_list("pk", "name"))
        known: list[Any] = [
            flock.pk,
            flock.name,
            customer.pk,
            customer.name,
            order.pk,
            entry.pk,
            *[pk for pk, _ in grades],
            *[name for _, name in grades],
            *[(farm.today() - dt.timedelta(days=n)).isoformat() for n in (0, 1, 7, 39)],
            0,
            1,
            100,
            # Text PostgreSQL refuses (the boundary rule) and text it must take as data.
            "a\x00b",
            "\ud800",
            "Robert'); DROP TABLE cluck_flock;--",
            "ñandú 🥚",
        ]
    yield {"farm": farm, "bearer": bearer, "known": known}
    with django_db_blocker.unblock():
        call_command("flush", interactive=False, verbosity=0)


def _snapshot(farm: Farm) -> tuple[int, ...]:
    return (
        AuditEvent.all_tenants.filter(farm=farm).count(),
        IdempotencyRecord.objects.filter(tenant_id=str(farm.pk)).count(),
        DailyEntry.all_tenants.filter(farm=farm).count(),
        EggLot.all_tenants.filter(farm=farm).count(),
        BirdMovement.all_tenants.filter(farm=farm).count(),
    )


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _leaves(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _leaves(child, (*path, index))
    if path:
        yield path


def _put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    copied = json.loads(json.dumps(value))
    node = copied
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = new
    return copied


def _without(value: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != key}


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(["", "1", "0", "2026-12-03", "20261203", "2026-12-03T00:00:00", "true"]),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3)
    ),
    max_leaves=6,
)


def _valid(spec: ToolSpec, known: list[Any]) -> st.SearchStrategy[dict[str, Any]]:
    schema = validator(spec.input_schema)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        instance: Any = draw(from_schema(copy.deepcopy(spec.input_schema)))
        # Steer some leaves onto rows that exist, where the schema allows the value.
        for path in list(_leaves(instance)):
            if draw(st.integers(0, 2)) == 0:
                candidate = _put(instance, path, draw(st.sampled_from(known)))
                if schema.is_valid(candidate):
                    instance = candidate
        return instance

    return build()


def _invalid(spec: ToolSpec) -> st.SearchStrategy[dict[str, Any]]:
    schema = validator(spec.input_schema)

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        instance: Any = draw(from_schema(copy.deepcopy(spec.input_schema)))
        how = draw(st.sampled_from(["replace", "drop", "add"]))
        if how == "replace" and list(_leaves(instance)):
            path = draw(st.sampled_from(list(_leaves(instance))))
            mutated = _put(instance, path, draw(JSON_VALUES))
        elif how == "drop" and spec.input_schema.get("required"):
            mutated = _without(instance, draw(st.sampled_from(spec.input_schema["required"])))
        else:
            name = draw(st.text(min_size=1, max_size=12).filter(lambda n: n not in instance))
            mutated = {**instance, name: draw(JSON_VALUES)}
        assume(not schema.is_valid(mutated))
        return mutated

    return build()


def _call(tools: Tools, spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": spec.name, "arguments": arguments},
    }
    response = tools.client.post(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        headers={
            "Authorization": f"Bearer {tools.bearer}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert response.status_code == 200, (response.status_code, response.content[:500])
    reply = json.loads(response.content)
    assert "result" in reply, reply  # never a JSON-RPC error for an object of arguments
    result: dict[str, Any] = reply["result"]
    return result


def _error(result: dict[str, Any]) -> dict[str, Any] | None:
    if not result["isError"]:
        assert isinstance(result.get("structuredContent"), dict)
        return None
    assert "structuredContent" not in result
    error: dict[str, Any] = json.loads(result["content"][0]["text"])["error"]
    return error


def _fuzz_settings() -> Any:
    return settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=DERANDOMIZE,
        database=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )


@mutation(
    "mcp_tools/execution/arguments.py",
    find="        if unstorable:\n            return _invalid(unstorable)\n",
    replace="",
)
@mutation(
    "cluck/mcp/production.py",
    find='    name="cluck_list_daily_entries",\n    errors={\n        **FLOCK_NAME,\n',
    replace='    name="cluck_list_daily_entries",\n    errors={\n',
)
@pytest.mark.parametrize("spec", PROJECT_TOOLS, ids=lambda spec: spec.name)
def test_valid_arguments_get_a_result_or_a_listed_error(
    world: dict[str, Any], spec: ToolSpec
) -> None:
    """Mutations, each seen red: (1) remove the NUL check from ``validate_arguments`` → a
    generated NUL reaches PostgreSQL → ``Tool.InternalError``; (2) remove an entry from a
    tool's ``errors`` (e.g. ``Flock.NotFound`` of ``cluck_list_daily_entries``) → an
    unlisted code.
    """
    tools = Tools(world["bearer"])
    farm = world["farm"]
    listed = {code for code, _ in spec.error_codes()}
    schema = validator(spec.input_schema)

    @_fuzz_settings()
    @given(arguments=_valid(spec, world["known"]))
    def run(arguments: dict[str, Any]) -> None:
        assert schema.is_valid(arguments)
        if not spec.read_only:
            arguments = {**arguments, "idempotencyKey": f"fuzz-{uuid.uuid4()}"}
        before = _snapshot(farm)
        with override_settings(MCP_TOOLS_RATE="1000000/m"):
            error = _error(_call(tools, spec, arguments))
        COUNTS[f"valid {'ok' if error is None else 'refused'}"] += 1
        if error is None:
            return
        assert error["code"] != CODE_INTERNAL, error
        assert error["code"] in listed, (spec.name, error)
        if error["code"] == CODE_INVALID_ARGUMENTS:
            codes = {e["code"] for e in error["data"]["errors"]}
            assert codes <= BOUNDARY_CODES, error
        assert _snapshot(farm) == before, (spec.name, arguments, error)

    published = copy.deepcopy(spec.input_schema)
    run()
    assert spec.input_schema == published  # the generator never edits the published schema


@mutation(
    "mcp_tools/execution/arguments.py",
    find="spec.args_model.model_validate_json(text, strict=True)",
    replace="spec.args_model.model_validate_json(text, strict=False)",
)
@pytest.mark.parametrize("spec", PROJECT_TOOLS, ids=lambda spec: spec.name)
def test_invalid_arguments_are_refused_and_write_nothing(
    world: dict[str, Any], spec: ToolSpec
) -> None:
    """Mutation: lax validation (``model_validate(wire, strict=False)`` in
    ``validate_arguments``) → ``true`` for an integer, ``"1"`` for a count, ``0`` for a date
    run the tool → red."""
    tools = Tools(world["bearer"])
    farm = world["farm"]

    @_fuzz_settings()
    @given(arguments=_invalid(spec))
    def run(arguments: dict[str, Any]) -> None:
        before = _snapshot(farm)
        with override_settings(MCP_TOOLS_RATE="1000000/m"):
            error = _error(_call(tools, spec, arguments))
        COUNTS["invalid refused"] += 1
        assert error is not None, (spec.name, arguments)
        assert error["code"] == CODE_INVALID_ARGUMENTS, (spec.name, arguments, error)
        assert _snapshot(farm) == before

    published = copy.deepcopy(spec.input_schema)
    run()
    assert spec.input_schema == published


def test_zz_report_the_fuzz_case_counts(capsys: Any) -> None:
    """Not a guard: prints how many calls the fuzz made (run with ``-s``)."""
    with capsys.disabled():
        print(f"\nMCP fuzz ({EXAMPLES} examples per tool and kind): {dict(sorted(COUNTS.items()))}")
