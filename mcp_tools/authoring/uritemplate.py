"""RFC 6570 URI templates for resource templates: parse, expand and match (the reverse).

Supported (checked when a template is registered, so a resource template is always servable):

- Level 1 simple string expansion ``{var}``: the value percent-encodes everything but the
  unreserved set, so it never spans ``/``, ``?`` or ``#``;
- Level 2 reserved ``{+var}`` (may contain ``/``; matched lazily) and fragment ``{#var}``;
- Level 3 single-variable path segments ``{/var}`` and labels ``{.var}``, and the form-style
  query ``{?a,b}`` / continuation ``{&c}`` (every query variable optional).

Level 4 modifiers (``{var:3}``, ``{list*}``) are refused: a template must be matchable, and
prefix or exploded values make the reverse ambiguous.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl, quote, unquote

VARIABLE_RE: Final = re.compile(r"^[A-Za-z0-9_]+$")
_EXPRESSION_RE: Final = re.compile(r"\{([^{}]*)\}")
_OPERATORS: Final = frozenset("+#/.?&")
_UNRESERVED: Final = "-._~"
_RESERVED: Final = ":/?#[]@!$&'()*+,;="


class UriTemplateError(ValueError):
    """The template uses syntax this module does not support (or is malformed)."""


@dataclass(frozen=True)
class _Expression:
    operator: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class UriTemplate:
    """A parsed template. Build with :func:`parse`."""

    template: str
    parts: tuple[str | _Expression, ...]
    variables: tuple[str, ...]
    query_variables: tuple[str, ...]
    _regex: re.Pattern[str]

    def expand(self, values: Mapping[str, object]) -> str:
        """The URI for ``values`` (RFC 6570 §3.2; absent or ``None`` values are skipped)."""
        out: list[str] = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            present = [(n, values[n]) for n in part.names if values.get(n) is not None]
            if not present:
                continue
            op = part.operator
            if op in ("?", "&"):
                pairs = "&".join(f"{n}={_encode(str(v), reserved=False)}" for n, v in present)
                out.append(op + pairs)
            else:
                ((_, value),) = present
                prefix = {"": "", "+": "", "#": "#", "/": "/", ".": "."}[op]
                out.append(prefix + _encode(str(value), reserved=op in ("+", "#")))
        return "".join(out)

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it is an expansion of this template, else ``None``.

        Query variables are optional; an unknown query parameter makes the URI not match (a
        resource URI is an identifier, not a search box).
        """
        path, query = uri, ""
        if self.query_variables:
            path, _, query = uri.partition("?")
        found = self._regex.fullmatch(path)
        if found is None:
            return None
        values = {name: unquote(value) for name, value in found.groupdict().items() if value}
        if query:
            for name, value in parse_qsl(query, keep_blank_values=True):
                if name not in self.query_variables or name in values:
                    return None
                values[name] = value
        return values


def _encode(value: str, *, reserved: bool) -> str:
    return quote(value, safe=_UNRESERVED + (_RESERVED if reserved else ""))


def parse(template: str) -> UriTemplate:
    """Parse ``template``.

    Raises:
        UriTemplateError: unbalanced braces, an unsupported operator or modifier, a repeated
            or malformed variable name, or a query expression that is not at the end.
    """
    if not isinstance(template, str) or not template:
        raise UriTemplateError("a URI template is a non-empty string")
    parts: list[str | _Expression] = []
    regex: list[str] = []
    names: list[str] = []
    query_names: list[str] = []
    position = 0
    for found in _EXPRESSION_RE.finditer(template):
        literal = template[position : found.start()]
        if "{" in literal or "}" in literal:
            raise UriTemplateError(f"unbalanced braces in {template!r}")
        if query_names and literal:
            raise UriTemplateError("a query expression ({?…}/{&…}) must end the template")
        if literal:
            parts.append(literal)
            regex.append(re.escape(literal))
        body = found.group(1)
        operator = body[0] if body and body[0] in _OPERATORS else ""
        variables = tuple(v.strip() for v in body[len(operator) :].split(","))
        for name in variables:
            if ":" in name or name.endswith("*"):
                raise UriTemplateError(f"level 4 modifiers are not supported: {{{body}}}")
            if not VARIABLE_RE.fullmatch(name):
                raise UriTemplateError(f"invalid variable name {name!r} in {template!r}")
            if name in names or name in query_names:
                raise UriTemplateError(f"variable {name!r} appears twice in {template!r}")
        if operator in ("?", "&"):
            query_names.extend(variables)
        else:
            if len(variables) != 1:
                raise UriTemplateError(f"one variable per path expression: {{{body}}}")
            if query_names:
                raise UriTemplateError("a query expression ({?…}/{&…}) must end the template")
            (name,) = variables
            names.append(name)
            regex.append(_pattern(operator, name))
        parts.append(_Expression(operator, variables))
        position = found.end()
    tail = template[position:]
    if "{" in tail or "}" in tail:
        raise UriTemplateError(f"unbalanced braces in {template!r}")
    if tail:
        if query_names:
            raise UriTemplateError("a query expression ({?…}/{&…}) must end the template")
        parts.append(tail)
        regex.append(re.escape(tail))
    return UriTemplate(
        template=template,
        parts=tuple(parts),
        variables=(*names, *query_names),
        query_variables=tuple(query_names),
        _regex=re.compile("".join(regex)),
    )


def _pattern(operator: str, name: str) -> str:
    # Simple values are percent-encoded except unreserved characters: one path segment.
    segment = r"[A-Za-z0-9\-._~%]+"
    if operator == "":
        return f"(?P<{name}>{segment})"
    if operator == "+":
        return f"(?P<{name}>[^#]+?)"
    if operator == "#":
        return f"(?:#(?P<{name}>.+))?"
    if operator == "/":
        return f"(?:/(?P<{name}>{segment}))?"
    return rf"(?:\.(?P<{name}>[A-Za-z0-9\-_~%]+))?"
