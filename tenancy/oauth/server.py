"""The oauthlib server behind every endpoint (``OAUTH2_SERVER_CLASS``): only what is offered.

django-oauth-toolkit's default, ``oauthlib.oauth2.Server``, carries every grant oauthlib has.
Turning one off in the toolkit's settings changes the metadata, not the server: the password
grant, for one, checks the user's password *before* its ``validate_grant_type`` refuses the
client, so a refused grant still answered right and wrong passwords differently and paid a
password hash for each guess. Here the grants this server does not offer (password,
client_credentials, implicit, device code) do not exist: oauthlib's token endpoint answers
``unsupported_grant_type`` for them before any client, user or secret is looked at.
"""

from __future__ import annotations

from typing import Any

from oauthlib.oauth2 import WebApplicationServer

# What the token endpoint dispatches (and DCR accepts): the code grant and its refresh.
GRANT_TYPES = ("authorization_code", "refresh_token")
RESPONSE_TYPES = ("code",)


class TenancyOAuth2Server(WebApplicationServer):
    """oauthlib's authorization-code server: ``code`` + PKCE, refresh, revocation, bearer.

    Accepts (and ignores) the device-flow keyword arguments django-oauth-toolkit passes every
    server class (``verification_uri``, ``interval``, ``user_code_generator``, ``pre_token``
    …): there is no device grant to give them to.
    """

    def __init__(
        self,
        request_validator: Any,
        token_expires_in: Any = None,
        token_generator: Any = None,
        refresh_token_generator: Any = None,
        **ignored: Any,
    ) -> None:
        super().__init__(
            request_validator,
            token_generator=token_generator,
            token_expires_in=token_expires_in,
            refresh_token_generator=refresh_token_generator,
        )
