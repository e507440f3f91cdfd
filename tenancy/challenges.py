"""The ``WWW-Authenticate`` challenge of every 401 that ``tenancy`` or its views answer.

Built in this one place so that every bearer challenge (REST, ``/mcp``, middleware) stays the
same and gains new parameters together.
"""

from __future__ import annotations

from tenancy.exceptions import AuthenticationFailedError

# RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (printable ASCII without the
# double quote and the backslash), so it can sit in a quoted-string without escaping.
_DESCRIPTION_CHARS = frozenset(chr(c) for c in range(0x20, 0x7F)) - {'"', "\\"}


def bearer_challenge(
    error: AuthenticationFailedError | None = None, *, realm: str | None = None
) -> str:
    """The ``Bearer`` challenge for a 401.

    Without ``error`` (no credentials were sent) it is the plain scheme, optionally with a
    ``realm``; with one (a bearer was sent and refused) it carries ``error="invalid_token"`` and
    the error's message as ``error_description`` (RFC 6750 §3).
    """
    params = []
    if realm is not None:
        params.append(f'realm="{realm}"')
    if error is not None:
        description = "".join(c for c in str(error.detail) if c in _DESCRIPTION_CHARS)
        params.append('error="invalid_token"')
        params.append(f'error_description="{description}"')
    return "Bearer " + ", ".join(params) if params else "Bearer"
