"""Tool arguments are what the published ``inputSchema`` says, strictly (issue 12, items 6, 7).

Every registered tool is walked; nothing here names a tool except the reproductions of the
reported cases.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from mcp_tools.authoring.registry import default_registry
from mcp_tools.authoring.spec import ToolSpec
from mcp_tools.execution import CODE_INVALID_ARGUMENTS, validate_arguments
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.conftest import McpClient
from tests.mcp_tools.schema_walk import (
    generated_schema,
    instance_reaching,
    minimal,
    put,
    string_locations,
    validator,
)
from tests.mutations import mutation
from tests.tool_errors import tool_error

SPECS = default_registry.specs()
GENERATED = [spec for spec in SPECS if generated_schema(spec)]


def _errors(result: BaseException | Any) -> list[dict[str, str]]:
    assert isinstance(result, dict), "the arguments were accepted"
    error = tool_error(result)
    assert error["code"] == CODE_INVALID_ARGUMENTS, error
    errors: list[dict[str, str]] = error["data"]["errors"]
    return errors


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(step) for step in path)


STRING_CASES = [
    (spec, path, instance)
    for spec in SPECS
    for path, instance in string_locations(spec.input_schema)
]


def test_every_tool_with_a_string_argument_is_walked() -> None:
    assert {spec.name for spec, _, _ in STRING_CASES} >= {
        "cluck_list_customers",
        "cluck_record_daily_entry",
    }
    assert any(len(path) > 1 for _, path, _ in STRING_CASES), "no nested string was found"


@mutation(
    "mcp_tools/execution/arguments.py",
    find="        if unstorable:\n            return _invalid(unstorable)\n",
    replace="",
)
@mutation(
    "mcp_tools/execution/arguments.py",
    find='    if b"\\\\u0000" in text or b".0" in text',
    replace='    if b".0" in text',
)
@pytest.mark.parametrize("text", ["a\x00b", "\x00", "\ud800", "ok\udfff"], ids=repr)
@pytest.mark.parametrize(
    ("spec", "path", "instance"),
    STRING_CASES,
    ids=[f"{spec.name}:{_dotted(path)}" for spec, path, _ in STRING_CASES],
)
def test_nul_or_a_lone_surrogate_in_any_string_argument_is_invalid_arguments(
    spec: ToolSpec, path: tuple[str | int, ...], instance: Any, text: str
) -> None:
    """Mutations, each red: drop the ``as_wire_json`` string check from
    ``validate_arguments`` → the value is accepted (or refused for another reason, without
    this field); over /mcp the NUL reaches PostgreSQL and is ``Tool.InternalError``. Let
    ``_plain_json`` take a NUL for plain JSON (the walk skipped) → the same."""
    errors = _errors(validate_arguments(spec, put(instance, path, text)))
    assert {"field": _dotted(path), "code": errors[0]["code"]} in [
        {"field": e["field"], "code": e["code"]} for e in errors
    ]
    assert errors[0]["code"] in {"string_contains_nul", "string_not_unicode"}


def test_a_nul_in_an_object_key_is_refused_too() -> None:
    spec = next(s for s in SPECS if s.name == "cluck_list_customers")
    assert _errors(validate_arguments(spec, {"se\x00arch": "a"}))[0]["code"] == (
        "string_contains_nul"
    )


@mutation(
    "mcp_tools/execution/arguments.py",
    find="        if unstorable:\n            return _invalid(unstorable)\n",
    replace="",
)
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_nul_search_over_mcp_is_invalid_arguments_not_an_internal_error() -> None:
    """The reported call, end to end. Mutation: as above → ``Tool.InternalError`` → red."""
    farm = FarmFactory.create()
    membership = MembershipFactory.create(tenant=farm, roles=["Admin"], user__password=None)
    client = McpClient(bearer_for(membership))
    reply = client.call("cluck_list_customers", {"search": "a\u0000b"})
    error = tool_error(reply["result"])
    assert error["code"] == CODE_INVALID_ARGUMENTS
    assert error["data"]["errors"][0]["field"] == "search"


# --- strict: the validator accepts exactly what the schema accepts -----------------------------

# Values a lax validator coerces into another type, plus plain ones of every JSON type.
BAIT: list[Any] = [
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    "1",
    "",
    "x",
    "true",
    "2026-12-03",
    "20261203",
    "2026-12-03T00:00:00",
    "2026-12-03T00:00:00Z",
    "2026-W49-4",
    "2026-02-30",
    None,
    [],
    [1],
    {},
    {"a": 1},
]


def _top_level_paths(spec: ToolSpec) -> list[tuple[str | int, ...]]:
    paths: list[tuple[str | int, ...]] = [(name,) for name in spec.input_schema["properties"]]
    paths += [path for path, _ in string_locations(spec.input_schema) if len(path) > 1]
    return paths


AGREEMENT = [(spec, path) for spec in GENERATED for path in _top_level_paths(spec)]


@mutation(
    "mcp_tools/execution/arguments.py",
    find="spec.args_model.model_validate_json(text, strict=True)",
    replace="spec.args_model.model_validate_json(text, strict=False)",
)
@mutation(
    "mcp_tools/execution/arguments.py",
    find=' or b".0" in text or b"e+" in text:',
    replace=":",
)
@pytest.mark.parametrize(
    ("spec", "path"), AGREEMENT, ids=[f"{s.name}:{_dotted(p)}" for s, p in AGREEMENT]
)
def test_the_validator_accepts_exactly_what_the_published_schema_accepts(
    spec: ToolSpec, path: tuple[str | int, ...]
) -> None:
    """For every argument (nested ones included) of every tool with a generated schema, each
    bait value is accepted by ``validate_arguments`` iff the published schema (Draft 2020-12,
    formats asserted) accepts it.

    Mutations, each red: lax validation (``model_validate_json(text, strict=False)`` in
    ``validate_arguments``) → ``true`` and ``"1"`` accepted for integers, ``0``,
    ``"20261203"`` and ``"2026-12-03T00:00:00"`` for dates (30 cases); ``_plain_json``
    blind to numbers written ``1.0`` → ``1.0`` (an integer to the schema) refused for
    integers.
    """
    schema = validator(spec.input_schema)
    base = instance_reaching(spec.input_schema, path)
    assert schema.is_valid(base), base
    disagreements = []
    for value in BAIT:
        arguments = put(base, path, value)
        accepted = not isinstance(validate_arguments(spec, arguments), dict)
        if accepted != schema.is_valid(arguments):
            disagreements.append((value, accepted))
    assert disagreements == []


@pytest.mark.parametrize(
    "patch",
    [
        {"date": 0},
        {"date": "20261203"},
        {"date": "2026-12-03T00:00:00"},
        {"totalEggs": True},
        {"totalEggs": "1"},
        {"grades": [{"grade": "Large", "quantity": "1"}]},
    ],
    ids=json.dumps,
)
def test_the_reported_coercions_are_refused(patch: dict[str, Any]) -> None:
    spec = next(s for s in SPECS if s.name == "cluck_record_daily_entry")
    arguments = {**minimal(spec.input_schema), **patch}
    field = next(iter(patch))
    assert any(e["field"].startswith(field) for e in _errors(validate_arguments(spec, arguments)))


@mutation(
    "mcp_tools/authoring/rules.py",
    find="            _state_date_format(schema)\n",
    replace="            pass\n",
)
def test_a_date_is_published_as_a_yyyy_mm_dd_string() -> None:
    """Many validators and generators treat ``format`` as a note only; the pattern says it.
    Mutation: drop ``_state_date_format`` from ``build_spec``'s arguments schema (``_json_schema``)
    → no pattern → red."""
    dates = [
        (spec.name, name, prop)
        for spec in SPECS
        for name, prop in spec.input_schema["properties"].items()
        for option in prop.get("anyOf", [prop])
        if option.get("format") == "date"
    ]
    assert dates, "no tool takes a date"
    for _tool, _name, prop in dates:
        option = next(o for o in prop.get("anyOf", [prop]) if o.get("format") == "date")
        assert option["type"] == "string"
        assert option["pattern"] == "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    spec = next(s for s in SPECS if s.name == "cluck_record_daily_entry")
    validated = validate_arguments(spec, {**minimal(spec.input_schema), "date": "2026-12-03"})
    assert getattr(validated, "date", None) == dt.date(2026, 12, 3)
