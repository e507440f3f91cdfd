"""The ``WWW-Authenticate`` challenge of every 401 and 403 that ``tenancy`` or its views answer.

Composed in this one place so that every bearer challenge (REST, ``/mcp``, middleware) carries
the same parameters and gains new ones together: ``realm``, ``resource_metadata`` and ``scope``
(RFC 9728 §5.1, supplied for the protected resource by an installed credential extension such
as ``tenancy.oauth``), ``error`` and ``error_description`` (RFC 6750 §3).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from tenancy.exceptions import AuthenticationFailedError

# RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (printable ASCII without the
# double quote and the backslash), so it can sit in a quoted-string without escaping.
_DESCRIPTION_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}

ChallengeParameters = Callable[[Any], dict[str, str]]
_parameter_sources: list[ChallengeParameters] = []


def register_challenge_parameters(source: ChallengeParameters) -> None:
    """Add ``source(request) -> {"resource_metadata": …, "scope": …}`` to every challenge.

    Called from an extension's ``AppConfig.ready()`` (``tenancy.oauth`` registers the RFC 9728
    parameters of the protected resource). A source answers ``{}`` for requests it does not
    protect. Registering the same source twice is a no-op.
    """
    if source not in _parameter_sources:
        _parameter_sources.append(source)


def _quoted(value: str) -> str:
    return "".join(c for c in value if c in _DESCRIPTION_CHARS)


def bearer_challenge(
    error: AuthenticationFailedError | None = None,
    *,
    request: Any = None,
    realm: str | None = None,
    error_code: str | None = None,
    scope: Iterable[str] | None = None,
) -> str:
    """The ``Bearer`` challenge for a 401 (or a 403 ``insufficient_scope``).

    Without ``error`` and ``error_code`` (no credentials were sent) it carries no error
    (RFC 6750 §3.1); with ``error`` (a bearer was sent and refused) it carries
    ``error="invalid_token"`` and the error's message as ``error_description``;
    ``error_code="insufficient_scope"`` with ``scope`` is the step-up challenge. With
    ``request``, registered sources add ``resource_metadata`` and a default ``scope``.
    """
    extra: dict[str, str] = {}
    if request is not None:
        for source in _parameter_sources:
            extra.update(source(request))
    params = []
    if realm is not None:
        params.append(f'realm="{_quoted(realm)}"')
    if error is not None or error_code is not None:
        params.append(f'error="{error_code or "invalid_token"}"')
        if error is not None:
            params.append(f'error_description="{_quoted(str(error.detail))}"')
    if "resource_metadata" in extra:
        params.append(f'resource_metadata="{_quoted(extra["resource_metadata"])}"')
    scopes = " ".join(scope) if scope is not None else extra.get("scope")
    if scopes:
        params.append(f'scope="{_quoted(scopes)}"')
    return "Bearer " + ", ".join(params) if params else "Bearer"
