"""``@resource`` and ``@resource_template``: read-only data a client can list and read.

    @resource(uri="shop://categories", name="categories", mime_type="application/json",
              description="The store's product categories.")
    def categories(ctx: CallContext) -> CategoryList: ...

    @resource_template("shop://products/{product_id}", name="product-card",
                       description="One product's card.",
                       complete={"product_id": complete_product_ids})
    def product_card(ctx: CallContext, *, product_id: int) -> str: ...

Like tools: the first parameter is ``ctx: CallContext``, a ``policy`` decides which roles see
it (hidden ones are unknown, -32602), and the function runs in a worker thread under the same
bounds. A template's keyword parameters are exactly its variables, validated (and converted)
by their annotations; a URI whose variables do not validate is not a resource (-32602,
``data.uri``). The function returns ``str`` (text), ``bytes`` (blob), a pydantic model (JSON
text) or a list of ``mcp_types`` resource contents; it raises ``ResourceNotFoundError`` (or a
domain error the translator knows) when the URI names nothing *this caller* may read.
"""

from __future__ import annotations

import base64
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from mcp_tools.authoring import definitions as d
from mcp_tools.authoring import uritemplate
from mcp_tools.authoring.icons import check_icons
from mcp_tools.authoring.rules import _model_name
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy import AUTHENTICATED, Policy

F = TypeVar("F", bound=Callable[..., Any])
BodyKind = Literal["text", "blob", "model", "contents"]
URI_RE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:[^\s]+$")
KIND = "resource"


def _body_kind(where: str, annotation: Any) -> tuple[BodyKind, type[BaseModel] | None]:
    if annotation is str:
        return "text", None
    if annotation is bytes:
        return "blob", None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model", annotation
    if typing.get_origin(annotation) is list:
        (item,) = typing.get_args(annotation) or (None,)
        options = typing.get_args(item) or (item,)
        if all(isinstance(o, type) and o.__name__.endswith("ResourceContents") for o in options):
            return "contents", None
    raise d.fail(
        KIND,
        where,
        "the return annotation must be str (text), bytes (blob), a pydantic model (JSON) or "
        "list[<mcp_types resource contents>]",
    )


def _wire(address: dict[str, Any], spec: ResourceSpec | ResourceTemplateSpec) -> dict[str, Any]:
    """A ``Resource`` / ``ResourceTemplate`` definition: its address, then what both share."""
    definition: dict[str, Any] = {**address, "name": spec.name, "description": spec.description}
    if spec.title:
        definition["title"] = spec.title
    if spec.mime_type:
        definition["mimeType"] = spec.mime_type
    if spec.icons:
        definition["icons"] = [dict(icon) for icon in spec.icons]
    return definition


@dataclass(frozen=True)
class ResourceSpec:
    """A concrete resource (one URI)."""

    uri: str
    name: str
    title: str | None
    description: str
    mime_type: str | None
    policy: Policy
    fn: Callable[..., Any]
    body_kind: BodyKind
    icons: tuple[dict[str, Any], ...] = ()

    @property
    def qualname(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def wire_definition(self) -> dict[str, Any]:
        return _wire({"uri": self.uri}, self)


@dataclass(frozen=True)
class ResourceTemplateSpec:
    """A family of resources named by an RFC 6570 template."""

    uri_template: str
    template: uritemplate.UriTemplate
    name: str
    title: str | None
    description: str
    mime_type: str | None
    policy: Policy
    fn: Callable[..., Any]
    body_kind: BodyKind
    args_model: type[BaseModel]
    completers: Mapping[str, d.Completer] = field(default_factory=dict)
    icons: tuple[dict[str, Any], ...] = ()

    @property
    def qualname(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def wire_definition(self) -> dict[str, Any]:
        return _wire({"uriTemplate": self.uri_template}, self)

    def bind(self, uri: str) -> BaseModel | None:
        """The validated variables of ``uri``, or ``None`` if it is not one of ours."""
        values = self.template.match(uri)
        # A variable holding NUL (``%00`` decodes to it) names nothing: it never reaches the
        # function (PostgreSQL text refuses it).
        if values is None or _jsonrpc.unstorable_strings(values):
            return None
        try:
            return self.args_model.model_validate(values)
        except ValidationError:
            return None


def contents_of(
    body_kind: BodyKind, mime_type: str | None, uri: str, value: Any
) -> list[dict[str, Any]]:
    """The ``contents`` of a ``resources/read`` result for a function's return value."""
    if body_kind == "text":
        return [{"uri": uri, "mimeType": mime_type or "text/plain", "text": str(value)}]
    if body_kind == "blob":
        blob = base64.b64encode(bytes(value)).decode()
        return [{"uri": uri, "mimeType": mime_type or "application/octet-stream", "blob": blob}]
    if body_kind == "model":
        text = value.model_dump_json(by_alias=True)
        return [{"uri": uri, "mimeType": mime_type or "application/json", "text": text}]
    return [
        item.model_dump(mode="json", by_alias=True, exclude_none=True)
        if isinstance(item, BaseModel)
        else dict(item)
        for item in value
    ]


class ResourceRegistry:
    """Registered resources by URI and templates by template string."""

    def __init__(self) -> None:
        self._resources: dict[str, ResourceSpec] = {}
        self._templates: dict[str, ResourceTemplateSpec] = {}

    def resource(
        self,
        fn: Any = None,
        /,
        *,
        uri: str,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        policy: Policy = AUTHENTICATED,
        icons: Sequence[Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register a concrete resource at ``uri``; returns the function unchanged.

        Raises:
            TypeError: used bare.
            ImproperlyConfigured: a registration rule is broken, or the URI is taken.
        """
        if fn is not None:
            raise TypeError("use @resource(uri=..., ...) with arguments; bare @resource is refused")

        def register(func: F) -> F:
            where = d.where_of(uri, func)
            if not isinstance(uri, str) or not URI_RE.fullmatch(uri) or "{" in uri:
                raise d.fail(KIND, where, "uri must be an absolute URI (scheme:...) without {}")
            text = d.check_common(KIND, where, func, description=description, policy=policy)
            hints, rest = d.keyword_parameters(KIND, where, func)
            if rest:
                raise d.fail(
                    KIND, where, "a resource takes only ctx (use a template for variables)"
                )
            kind, _ = _body_kind(where, hints.get("return"))
            spec = ResourceSpec(
                uri=uri,
                name=name or func.__name__,
                title=title,
                description=text,
                mime_type=mime_type,
                policy=policy,
                fn=func,
                body_kind=kind,
                icons=check_icons(f"MCP {KIND} {where}", icons),
            )
            d.register_once(self._resources, uri, spec, kind=KIND, where=where, taken="uri")
            return func

        return register

    def resource_template(
        self,
        uri_template: str,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        policy: Policy = AUTHENTICATED,
        complete: Mapping[str, d.Completer] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register a resource template (RFC 6570); returns the function unchanged.

        The function's keyword parameters are exactly the template's variables.

        Raises:
            ImproperlyConfigured: a registration rule is broken, or the template is taken.
        """
        if callable(uri_template):
            raise TypeError("use @resource_template('<scheme>://…{var}', ...)")

        def register(func: F) -> F:
            where = d.where_of(uri_template, func)
            try:
                template = uritemplate.parse(uri_template)
            except uritemplate.UriTemplateError as exc:
                raise d.fail(KIND, where, str(exc)) from exc
            if not template.variables:
                raise d.fail(KIND, where, "a template has variables (use @resource otherwise)")
            if not URI_RE.fullmatch(template.expand(dict.fromkeys(template.variables, "x"))):
                raise d.fail(KIND, where, "the template must expand to an absolute URI")
            text = d.check_common(KIND, where, func, description=description, policy=policy)
            hints, rest = d.keyword_parameters(KIND, where, func)
            names = [p.name for p in rest]
            if sorted(names) != sorted(template.variables):
                raise d.fail(
                    KIND,
                    where,
                    f"keyword parameters {names} must be exactly the variables "
                    f"{list(template.variables)}",
                )
            fields: dict[str, Any] = {}
            for param in rest:
                optional = param.name in template.query_variables
                default = param.default
                if default is param.empty:
                    if optional:
                        raise d.fail(KIND, where, f"query variable {param.name!r} needs a default")
                    default = ...
                fields[param.name] = (hints[param.name], default)
            args_model = create_model(
                _model_name(func.__name__, "Variables"),
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
            kind, _ = _body_kind(where, hints.get("return"))
            spec = ResourceTemplateSpec(
                uri_template=uri_template,
                template=template,
                name=name or func.__name__,
                title=title,
                description=text,
                mime_type=mime_type,
                policy=policy,
                fn=func,
                body_kind=kind,
                args_model=args_model,
                completers=d.check_completers(KIND, where, complete, set(names)),
                icons=check_icons(f"MCP {KIND} {where}", icons),
            )
            d.register_once(
                self._templates, uri_template, spec, kind=KIND, where=where, taken="template"
            )
            return func

        return register

    def resources(self) -> list[ResourceSpec]:
        """Concrete resources in URI order (the listing's deterministic order)."""
        return [self._resources[uri] for uri in sorted(self._resources)]

    def templates(self) -> list[ResourceTemplateSpec]:
        """Templates in template-string order (also the order URIs are matched in)."""
        return [self._templates[key] for key in sorted(self._templates)]

    def __len__(self) -> int:
        return len(self._resources) + len(self._templates)


default_resources = ResourceRegistry()
resource = default_resources.resource
resource_template = default_resources.resource_template
