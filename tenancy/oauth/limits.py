"""The authorization server's rate limits: counted by django-ratelimit, refused with a 429.

Every limit keys on the one client-address rule (``tenancy.rates.addresses.rate_key``); the token
endpoint also keys on the client it names, so a client's budget holds across addresses. A
refusal is a 429 with ``Retry-After`` in the endpoint's own format: OAuth JSON for the token,
revocation and registration endpoints (``oauth_error``), an HTML page for the sign-in page.
django-ratelimit's own ``block=True`` raises ``Ratelimited`` (a ``PermissionDenied``), which
Django answers with an HTML 403 — the wrong status, and no hint when to come back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import JsonResponse
from django_ratelimit import ALL
from django_ratelimit.core import get_usage

from tenancy import conf as tenancy_conf
from tenancy.events import rate_limited
from tenancy.oauth import conf
from tenancy.oauth.inputs import basic_credentials
from tenancy.rates.addresses import rate_key


def client_rate_key(group: str, request: Any) -> str:
    """The client a token request names (form ``client_id`` or HTTP Basic), as a ratelimit key."""
    credentials = basic_credentials(request)
    client_id = credentials[0] if credentials else request.POST.get("client_id", "")
    return f"client:{client_id}"


@dataclass(frozen=True)
class Limit:
    group: str
    rate: Callable[[], str | None]
    key: Callable[[str, Any], str] = rate_key


REGISTRATION = (Limit("tenancy.oauth.register", lambda: conf.get("REGISTRATION_RATE")),)
TOKEN = (
    Limit("tenancy.oauth.token", lambda: conf.get("TOKEN_RATE")),
    Limit("tenancy.oauth.token.client", lambda: conf.get("TOKEN_CLIENT_RATE"), client_rate_key),
)
# Revocation spends the token endpoint's per-address budget: same clients, same abuse.
REVOCATION = TOKEN[:1]
SIGN_IN = (Limit("tenancy.oauth.sign_in", lambda: tenancy_conf.get("LOGIN_RATE")),)


def retry_after(request: Any, limits: tuple[Limit, ...]) -> int | None:
    """Count this request against each of ``limits``; the seconds to wait when one is over."""
    for limit in limits:
        usage = get_usage(
            request,
            group=limit.group,
            key=limit.key,
            rate=limit.rate(),
            method=ALL,
            increment=True,
        )
        if usage is not None and usage["should_limit"]:
            rate_limited.send(sender=retry_after, request=request, group=limit.group)
            return max(1, int(usage["time_left"]))
    return None


def oauth_error(
    error: str, description: str, *, status: int = 400, retry: int | None = None
) -> JsonResponse:
    """An OAuth error body (RFC 6749 §5.2), never cached; ``retry`` adds ``Retry-After``."""
    response = JsonResponse({"error": error, "error_description": description}, status=status)
    response["Cache-Control"] = "no-store"
    response["Pragma"] = "no-cache"
    if retry is not None:
        response["Retry-After"] = str(retry)
    return response


def too_many(retry: int) -> JsonResponse:
    # No OAuth error code means "rate limited"; temporarily_unavailable (RFC 6749 §4.1.2.1) is
    # the registered one closest to it, and the status and Retry-After say the rest.
    return oauth_error(
        "temporarily_unavailable",
        f"Too many requests; retry in {retry} seconds.",
        status=429,
        retry=retry,
    )
