"""``@prompt``: reusable message templates a client offers its user (``prompts/list``,
``prompts/get``).

    @prompt(name="summarise_day", title="Summarise a day's sales",
            description="...", complete={"product": complete_product_names})
    def summarise_day(
        ctx: CallContext,
        *,
        date: Annotated[str | None, Field(description="ISO date")] = None,
        product: str | None = None,
    ) -> list[PromptMessage]: ...

Arguments are strings on the wire (camelCase names, like tool arguments); a parameter without a
default is required. The function returns a ``str`` (one user message) or a list of
``mcp_types.PromptMessage`` (text, images, embedded resources); ``user()`` and ``assistant()``
build them. Same rules, policies and bounds as tools.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from mcp_types import EmbeddedResource, ImageContent, PromptMessage, TextContent
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic.alias_generators import to_camel

from mcp_tools.authoring import definitions as d
from mcp_tools.authoring.icons import check_icons
from mcp_tools.authoring.rules import _model_name
from mcp_tools.rpc import jsonrpc as _jsonrpc
from tenancy import AUTHENTICATED, Policy

F = TypeVar("F", bound=Callable[..., Any])
KIND = "prompt"
Content = str | TextContent | ImageContent | EmbeddedResource


def user(content: Content) -> PromptMessage:
    """A user message (text, an image or an embedded resource)."""
    return _message("user", content)


def assistant(content: Content) -> PromptMessage:
    """An assistant message."""
    return _message("assistant", content)


def _message(role: Literal["user", "assistant"], content: Content) -> PromptMessage:
    block = TextContent(type="text", text=content) if isinstance(content, str) else content
    return PromptMessage(role=role, content=block)


@dataclass(frozen=True)
class PromptArgumentSpec:
    name: str  # wire name (camelCase)
    python_name: str
    description: str | None
    required: bool

    def wire_definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = {"name": self.name, "required": self.required}
        if self.description:
            definition["description"] = self.description
        return definition


@dataclass(frozen=True)
class PromptSpec:
    name: str
    title: str | None
    description: str
    policy: Policy
    fn: Callable[..., Any]
    arguments: tuple[PromptArgumentSpec, ...]
    args_model: type[BaseModel]
    result_kind: Literal["text", "messages"]
    completers: Mapping[str, d.Completer] = field(default_factory=dict)  # wire name → fn
    icons: tuple[dict[str, Any], ...] = ()

    @property
    def qualname(self) -> str:
        return f"{self.fn.__module__}.{self.fn.__qualname__}"

    def wire_definition(self) -> dict[str, Any]:
        definition: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.title:
            definition["title"] = self.title
        if self.arguments:
            definition["arguments"] = [a.wire_definition() for a in self.arguments]
        if self.icons:
            definition["icons"] = [dict(icon) for icon in self.icons]
        return definition

    def validate(self, arguments: Mapping[str, Any]) -> BaseModel | list[dict[str, str]]:
        """The validated arguments, or the list of problems (``-32602``)."""
        unstorable = _jsonrpc.unstorable_strings(dict(arguments))
        if unstorable:
            return [{"field": u["field"], "code": u["code"]} for u in unstorable]
        try:
            return self.args_model.model_validate(dict(arguments))
        except ValidationError as exc:
            return [
                {"field": ".".join(str(p) for p in e["loc"]) or "(arguments)", "code": e["type"]}
                for e in exc.errors(include_url=False, include_input=False)
            ]

    def messages(self, value: Any) -> list[dict[str, Any]]:
        items = [user(value)] if self.result_kind == "text" else list(value)
        return [
            (m if isinstance(m, BaseModel) else PromptMessage.model_validate(m)).model_dump(
                mode="json", by_alias=True, exclude_none=True
            )
            for m in items
        ]


def _is_string(annotation: Any) -> tuple[bool, bool]:
    """(is a string argument, is optional)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if annotation is str:
        return True, False
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = set(typing.get_args(annotation))
        return options == {str, type(None)}, True
    return False, False


def _description_of(annotation: Any) -> str | None:
    for extra in typing.get_args(annotation)[1:] if hasattr(annotation, "__metadata__") else ():
        text = getattr(extra, "description", None)
        if text:
            return str(text)
    return None


class PromptRegistry:
    def __init__(self) -> None:
        self._prompts: dict[str, PromptSpec] = {}

    def prompt(
        self,
        fn: Any = None,
        /,
        *,
        name: str,
        title: str | None = None,
        description: str | None = None,
        policy: Policy = AUTHENTICATED,
        complete: Mapping[str, d.Completer] | None = None,
        icons: Sequence[Mapping[str, Any]] | None = None,
    ) -> Callable[[F], F]:
        """Register the decorated function as a prompt; returns it unchanged.

        ``complete`` maps argument names (Python or wire spelling) to completers
        ``fn(ctx, value, context_arguments) -> list[str]``.

        Raises:
            TypeError: used bare.
            ImproperlyConfigured: a registration rule is broken, or the name is taken.
        """
        if fn is not None:
            raise TypeError("use @prompt(name=..., ...) with arguments; bare @prompt is refused")

        def register(func: F) -> F:
            where = d.where_of(name, func)
            if not isinstance(name, str) or not d.NAME_RE.fullmatch(name):
                raise d.fail(KIND, where, "the name must match ^[A-Za-z0-9._-]{1,128}$")
            text = d.check_common(KIND, where, func, description=description, policy=policy)
            hints, rest = d.keyword_parameters(KIND, where, func)
            arguments = []
            fields: dict[str, Any] = {}
            for param in rest:
                is_string, optional = _is_string(hints[param.name])
                required = param.default is param.empty
                if not is_string or (optional and required):
                    raise d.fail(
                        KIND,
                        where,
                        f"argument {param.name!r} must be `str` (required) or "
                        "`str | None = None` (prompt arguments are strings on the wire)",
                    )
                arguments.append(
                    PromptArgumentSpec(
                        name=to_camel(param.name),
                        python_name=param.name,
                        description=_description_of(hints[param.name]),
                        required=required,
                    )
                )
                fields[param.name] = (hints[param.name], ... if required else param.default)
            args_model = create_model(
                _model_name(name, "PromptArguments"),
                __config__=ConfigDict(
                    extra="forbid",
                    alias_generator=to_camel,
                    validate_by_alias=True,
                    validate_by_name=False,
                ),
                **fields,
            )
            by_python = {a.python_name: a.name for a in arguments}
            wire_completers = {by_python.get(k, k): v for k, v in (complete or {}).items()}
            completers = d.check_completers(
                KIND, where, wire_completers, {a.name for a in arguments}
            )
            returns = hints.get("return")
            if returns is str:
                result_kind: Literal["text", "messages"] = "text"
            elif typing.get_origin(returns) is list and typing.get_args(returns) == (
                PromptMessage,
            ):
                result_kind = "messages"
            else:
                raise d.fail(
                    KIND, where, "the return annotation must be str or list[PromptMessage]"
                )
            spec = PromptSpec(
                name=name,
                title=title,
                description=text,
                policy=policy,
                fn=func,
                arguments=tuple(arguments),
                args_model=args_model,
                result_kind=result_kind,
                completers=completers,
                icons=check_icons(f"MCP {KIND} {where}", icons),
            )
            d.register_once(self._prompts, name, spec, kind=KIND, where=where, taken="the name")
            return func

        return register

    def specs(self) -> list[PromptSpec]:
        return [self._prompts[key] for key in sorted(self._prompts)]

    def __len__(self) -> int:
        return len(self._prompts)


default_prompts = PromptRegistry()
prompt = default_prompts.prompt
