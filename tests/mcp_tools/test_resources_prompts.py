"""Resources, resource templates, prompts and completions: prepared, role-filtered, bounded.

The conformance fixtures (``tests.testapps.mcp_surface``) are the subjects; the farm's own
resources are guarded in ``tests/cluck/test_mcp_surface.py``.
"""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from mcp_types import PromptMessage
from pydantic import Field

from cluck.roles import FARM_ROLES
from mcp_tools import CallContext
from mcp_tools.authoring import uritemplate as rfc6570
from mcp_tools.authoring.prompts import PromptRegistry
from mcp_tools.authoring.resources import ResourceRegistry
from mcp_tools.catalogue.surfaces import activated, active_catalogue, build_catalogue
from tests.mcp_tools.conftest import HANDSHAKE
from tests.mutations import Edit, mutation

pytestmark = pytest.mark.django_db


def _result(response: Any) -> dict[str, Any]:
    body = json.loads(response.content)
    assert "result" in body, body
    return body["result"]


def _error(response: Any) -> dict[str, Any]:
    body = json.loads(response.content)
    assert "error" in body, body
    return body["error"]


def _handshake(client: Any, method: str, params: dict[str, Any] | None = None) -> Any:
    return client.message(method, params or {}, **{"MCP-Protocol-Version": HANDSHAKE})


# --- URI templates ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("template", "values", "uri"),
    [
        ("test://template/{id}/data", {"id": "123"}, "test://template/123/data"),
        ("farm://flocks/{flock_id}", {"flock_id": "a b"}, "farm://flocks/a%20b"),
        ("file:///{+path}", {"path": "a/b c"}, "file:///a/b%20c"),
        ("farm://days{/day}", {"day": "2026-01-02"}, "farm://days/2026-01-02"),
        ("farm://report{?from,to}", {"from": "1", "to": "2"}, "farm://report?from=1&to=2"),
    ],
)
def test_uri_templates_expand_and_match_back(template, values, uri):
    parsed = rfc6570.parse(template)
    assert parsed.expand(values) == uri
    assert parsed.match(uri) == values


@pytest.mark.parametrize(
    "template", ["x://{a", "x://{a:3}", "x://{list*}", "x://{a,b}", "x://{a}/{a}", "x://{?q}/x"]
)
def test_unsupported_uri_templates_are_refused(template):
    with pytest.raises(rfc6570.UriTemplateError):
        rfc6570.parse(template)


def test_a_simple_variable_never_spans_a_path_segment():
    parsed = rfc6570.parse("farm://flocks/{flock_id}")
    assert parsed.match("farm://flocks/1/../2") is None
    assert parsed.match("farm://flocks/12?x=1") is None


# --- registration rules ------------------------------------------------------------------------


def test_resource_registration_rules_are_start_up_errors():
    registry = ResourceRegistry()
    with pytest.raises(TypeError):
        registry.resource(lambda ctx: "x")  # type: ignore[call-arg]
    with pytest.raises(ImproperlyConfigured, match="absolute URI"):
        registry.resource(uri="no-scheme", description="d")(_text)
    with pytest.raises(ImproperlyConfigured, match="exactly the variables"):
        registry.resource_template("x://a/{b}", description="d")(_text)
    with pytest.raises(ImproperlyConfigured, match="CallContext"):

        @registry.resource(uri="x://y", description="d")
        def no_ctx(request: Any) -> str:
            return ""

    with pytest.raises(ImproperlyConfigured, match="return annotation"):

        @registry.resource(uri="x://z", description="d")
        def returns_int(ctx: CallContext) -> int:
            return 1

    registry.resource(uri="x://ok", description="d")(_text)
    with pytest.raises(ImproperlyConfigured, match="already registered"):
        registry.resource(uri="x://ok", description="d")(_other_text)


def _text(ctx: CallContext) -> str:
    return "x"


def _other_text(ctx: CallContext) -> str:
    return "y"


def test_prompt_arguments_must_be_strings():
    registry = PromptRegistry()
    with pytest.raises(ImproperlyConfigured, match="must be `str`"):

        @registry.prompt(name="p", description="d")
        def takes_int(ctx: CallContext, *, n: int) -> str:
            return ""

    @registry.prompt(name="q", description="d")
    def fine(
        ctx: CallContext,
        *,
        first_name: Annotated[str, Field(description="Who")],
        note: str | None = None,
    ) -> list[PromptMessage]:
        return []

    (spec,) = registry.specs()
    assert spec.wire_definition()["arguments"] == [
        {"name": "firstName", "required": True, "description": "Who"},
        {"name": "note", "required": False},
    ]


# --- listing and reading -----------------------------------------------------------------------


@mutation(
    Edit(
        "mcp_tools/catalogue/features.py",
        find=(
            "    admitted_resources = [r for r in resources.resources() if admits(r.policy)]\n"
            "    admitted_templates = [t for t in resources.templates() if admits(t.policy)]\n"
            "    admitted_prompts = [p for p in prompts.specs() if admits(p.policy)]\n"
        ),
        replace=(
            "    admitted_resources = list(resources.resources())\n"
            "    admitted_templates = list(resources.templates())\n"
            "    admitted_prompts = list(prompts.specs())\n"
        ),
    ),
)
def test_resources_and_templates_are_listed_per_role(mcp_client):
    """Mutation: drop ``admits`` in ``mcp_tools.catalogue.features.build_features`` → red."""
    owner = {
        r["uri"] for r in _result(_handshake(mcp_client("Owner"), "resources/list"))["resources"]
    }
    worker = {
        r["uri"] for r in _result(_handshake(mcp_client("Worker"), "resources/list"))["resources"]
    }
    assert {"test://static-text", "test://static-binary", "farm://grades"} <= worker
    assert "test://owner-only" in owner and "test://owner-only" not in worker
    templates = _result(_handshake(mcp_client("Worker"), "resources/templates/list"))
    assert "test://template/{id}/data" in {t["uriTemplate"] for t in templates["resourceTemplates"]}


def test_text_binary_and_template_reads(mcp_client):
    client = mcp_client()
    (text,) = _result(_handshake(client, "resources/read", {"uri": "test://static-text"}))[
        "contents"
    ]
    assert text == {
        "uri": "test://static-text",
        "mimeType": "text/plain",
        "text": "This is the content of the static text resource.",
    }
    (blob,) = _result(_handshake(client, "resources/read", {"uri": "test://static-binary"}))[
        "contents"
    ]
    assert base64.b64decode(blob["blob"]).startswith(b"\x89PNG")
    (data,) = _result(_handshake(client, "resources/read", {"uri": "test://template/42/data"}))[
        "contents"
    ]
    assert json.loads(data["text"])["id"] == "42"


def test_an_unknown_resource_is_invalid_params_with_the_uri(mcp_client):
    uri = "test://nope"
    response = mcp_client().modern("resources/read", {"uri": uri})
    assert response.status_code == 400
    assert _error(response) == {
        "code": -32602,
        "message": "Resource not found",
        "data": {"uri": uri},
    }


@mutation(
    Edit(
        "mcp_tools/catalogue/features.py",
        find=(
            "    admitted_resources = [r for r in resources.resources() if ad"
            "mits(r.policy)]\n"
            "    admitted_templates = [t for t in resources.templates() if ad"
            "mits(t.policy)]\n"
            "    admitted_prompts = [p for p in prompts.specs() if admits(p.p"
            "olicy)]\n"
        ),
        replace=(
            "    admitted_resources = list(resources.resources())\n"
            "    admitted_templates = list(resources.templates())\n"
            "    admitted_prompts = list(prompts.specs())\n"
        ),
    ),
    Edit(
        "mcp_tools/methods/features.py",
        find="    return spec if spec is not None and evaluate(spec.policy, ctx.actor) else None",
        replace="    return spec",
    ),
)
def test_hidden_resources_and_prompts_are_unknown_like_missing_ones(mcp_client):
    """Mutation: serve resources and prompts without their policy — build the feature surfaces
    from every definition (drop ``admits`` in ``mcp_tools.catalogue.features.build_features``) *and*
    make ``mcp_tools.handlers._visible`` return the spec unasked → red. (Each layer alone is
    caught by the listing test and the live-policy test below.)"""
    worker = mcp_client("Worker")
    hidden = _error(_handshake(worker, "resources/read", {"uri": "test://owner-only"}))
    missing = _error(_handshake(worker, "resources/read", {"uri": "test://owner-onlx"}))
    assert hidden["code"] == missing["code"] == -32602
    assert hidden["message"] == missing["message"]
    prompt_hidden = _error(_handshake(worker, "prompts/get", {"name": "mcptest_owner_prompt"}))
    prompt_missing = _error(_handshake(worker, "prompts/get", {"name": "mcptest_no_prompt"}))
    assert prompt_hidden["code"] == prompt_missing["code"] == -32602
    owner = mcp_client("Owner")
    assert _result(_handshake(owner, "resources/read", {"uri": "test://owner-only"}))["contents"]
    assert _result(_handshake(owner, "prompts/get", {"name": "mcptest_owner_prompt"}))["messages"]


@mutation(
    "mcp_tools/methods/features.py",
    find="    return spec if spec is not None and evaluate(spec.policy, ctx.actor) else None",
    replace="    return spec",
)
def test_the_live_policy_is_asked_again_on_read(mcp_client):
    """Mutation: drop the ``evaluate`` call in ``handlers._visible`` → red: a surface wrongly
    built for Workers with an owner-only resource would serve it."""
    catalogue = active_catalogue()
    owner, worker = FARM_ROLES["Owner"], FARM_ROLES["Worker"]
    surfaces = dict(catalogue.surfaces)
    surfaces[worker] = surfaces[owner]  # a broken build: Workers get the Owner surface
    import dataclasses

    with activated(dataclasses.replace(catalogue, surfaces=surfaces)):
        refused = _error(
            _handshake(mcp_client("Worker"), "resources/read", {"uri": "test://owner-only"})
        )
    assert refused["code"] == -32602


@mutation(
    "mcp_tools/methods/features.py",
    find=(
        "    except ResourceNotFoundError:\n"
        '        return _Failed(INVALID_PARAMS, "Resource not found",'
        ' {"uri": uri})'
    ),
    replace=(
        "    except ResourceNotFoundError:\n"
        '        return _Failed(INVALID_PARAMS, "Resource not found")'
    ),
)
def test_a_template_instance_of_another_tenant_is_not_found(mcp_client):
    """Mutation: in ``handlers._read`` answer ``ResourceNotFoundError`` without ``data.uri``
    → red (another tenant's instance must read exactly like a URI that names nothing)."""
    client = mcp_client()
    tenant = client.membership.tenant.pk
    mine = _handshake(client, "resources/read", {"uri": f"test://tenants/{tenant}/note"})
    assert _result(mine)["contents"][0]["text"] == f"note of tenant {tenant}"
    for uri in (f"test://tenants/{tenant + 1}/note", "test://tenants/not-a-number/note"):
        assert _error(_handshake(client, "resources/read", {"uri": uri}))["data"] == {"uri": uri}


def test_modern_lists_and_reads_carry_caching_hints(mcp_client):
    client = mcp_client()
    for method in ("resources/list", "resources/templates/list", "prompts/list"):
        result = _result(client.modern(method))
        assert (result["ttlMs"], result["cacheScope"], result["resultType"]) == (
            0,
            "private",
            "complete",
        )
    read = _result(client.modern("resources/read", {"uri": "test://static-text"}))
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")


def test_lists_page_by_cursors_bound_to_the_listing(mcp_client):
    client = mcp_client("Owner")
    small = build_catalogue(
        active_catalogue_registry(), page_size=1, server_name="t", server_version="1"
    )
    with activated(small):
        uris, cursor = [], None
        while True:
            page = _result(
                _handshake(client, "resources/list", {"cursor": cursor} if cursor else {})
            )
            assert len(page["resources"]) == 1
            uris.append(page["resources"][0]["uri"])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        prompts = _result(_handshake(client, "prompts/list"))
        foreign = prompts["nextCursor"]
        refused = _error(_handshake(client, "resources/list", {"cursor": foreign}))
    assert uris == sorted(uris) and len(uris) > 2
    assert refused["code"] == -32602


def active_catalogue_registry() -> Any:
    from mcp_tools.authoring.registry import default_registry

    return default_registry


# --- prompts ---------------------------------------------------------------------------------


def test_prompts_get_with_arguments_images_and_embedded_resources(mcp_client):
    client = mcp_client()
    listed = {p["name"] for p in _result(_handshake(client, "prompts/list"))["prompts"]}
    assert {"test_simple_prompt", "test_prompt_with_arguments", "cluck_summarise_day"} <= listed
    with_args = _result(
        _handshake(
            client,
            "prompts/get",
            {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}},
        )
    )
    assert (
        with_args["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='a', arg2='b'"
    )
    image = _result(_handshake(client, "prompts/get", {"name": "test_prompt_with_image"}))
    assert image["messages"][0]["content"]["type"] == "image"
    embedded = _result(
        _handshake(
            client,
            "prompts/get",
            {"name": "test_prompt_with_embedded_resource", "arguments": {"resourceUri": "x://r"}},
        )
    )
    assert embedded["messages"][0]["content"]["resource"]["uri"] == "x://r"


def test_prompt_arguments_are_validated(mcp_client):
    client = mcp_client()
    missing = _error(
        _handshake(client, "prompts/get", {"name": "test_prompt_with_arguments", "arguments": {}})
    )
    assert missing["code"] == -32602
    assert {e["field"] for e in missing["data"]["errors"]} == {"arg1", "arg2"}
    unknown = _error(
        _handshake(
            client,
            "prompts/get",
            {
                "name": "test_prompt_with_arguments",
                "arguments": {"arg1": "a", "arg2": "b", "arg_1": "python name"},
            },
        )
    )
    assert unknown["code"] == -32602


# --- completions -----------------------------------------------------------------------------


def test_completions_answer_prompt_arguments_and_template_variables(mcp_client):
    client = mcp_client()
    prompt_ref = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
    completion = _result(
        _handshake(
            client,
            "completion/complete",
            {"ref": prompt_ref, "argument": {"name": "arg1", "value": "par"}},
        )
    )["completion"]
    assert completion == {"values": ["paris", "park", "party"], "total": 3, "hasMore": False}
    template_ref = {"type": "ref/resource", "uri": "test://tenants/{tenant}/note"}
    own = _result(
        _handshake(
            client,
            "completion/complete",
            {"ref": template_ref, "argument": {"name": "tenant", "value": ""}},
        )
    )["completion"]
    assert own["values"] == [str(client.membership.tenant.pk)]
    no_completer = _result(
        _handshake(
            client,
            "completion/complete",
            {"ref": prompt_ref, "argument": {"name": "arg2", "value": ""}},
        )
    )
    assert no_completer["completion"]["values"] == []


@mutation(
    Edit(
        "mcp_tools/catalogue/features.py",
        find=(
            "    admitted_resources = [r for r in resources.resources() if ad"
            "mits(r.policy)]\n"
            "    admitted_templates = [t for t in resources.templates() if ad"
            "mits(t.policy)]\n"
            "    admitted_prompts = [p for p in prompts.specs() if admits(p.p"
            "olicy)]\n"
        ),
        replace=(
            "    admitted_resources = list(resources.resources())\n"
            "    admitted_templates = list(resources.templates())\n"
            "    admitted_prompts = list(prompts.specs())\n"
        ),
    ),
    Edit(
        "mcp_tools/methods/features.py",
        find='        target = _visible(ctx, surface.features.prompts.get(str(ref.get("name"))))',
        replace='        target = surface.features.prompts.get(str(ref.get("name")))',
    ),
)
def test_completion_of_a_hidden_prompt_is_unknown(mcp_client):
    """Mutation: build the feature surfaces from every definition (drop ``admits`` in
    ``mcp_tools.catalogue.features.build_features``) *and* look the prompt up in
    ``handlers._complete``
    without ``_visible`` → red (a Worker gets completions of an owner-only prompt)."""
    ref = {"type": "ref/prompt", "name": "mcptest_owner_prompt"}
    refused = _error(
        _handshake(
            mcp_client("Worker"),
            "completion/complete",
            {"ref": ref, "argument": {"name": "x", "value": ""}},
        )
    )
    assert refused["code"] == -32602


def test_logging_set_level_is_accepted_but_not_remembered(mcp_client):
    client = mcp_client()
    assert _result(_handshake(client, "logging/setLevel", {"level": "debug"})) == {}
    assert _error(_handshake(client, "logging/setLevel", {"level": "chatty"}))["code"] == -32602
    assert client.modern("logging/setLevel", {"level": "debug"}).status_code == 404
