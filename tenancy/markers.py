"""View markers read by the tenancy middleware (never path lists)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.utils.decorators import method_decorator

F = TypeVar("F", bound=Callable[..., Any])

IGNORES_AMBIENT_CREDENTIALS = "tenancy_ignores_ambient_credentials"
ACCEPTS_SUPERSEDED_CREDENTIALS = "tenancy_accepts_superseded_credentials"
RENDERS_AUTHENTICATION_FAILURE = "tenancy_renders_authentication_failure"


def ignores_ambient_credentials(view: F) -> F:
    """The view authenticates from its body (login) or serves anyone (public discovery
    documents): a bearer sent along is not even read.

    A token of tenant A sent to the login of tenant B must not resolve tenant A.
    """
    setattr(view, IGNORES_AMBIENT_CREDENTIALS, True)
    return view


def accepts_superseded_credentials(view: F) -> F:
    """The view still runs for a token whose credential epoch moved on (logout)."""
    setattr(view, ACCEPTS_SUPERSEDED_CREDENTIALS, True)
    return view


CLAIMS_AUTHORIZATION = "tenancy_claims_authorization"


def claims_authorization(view: F) -> F:
    """The view accepts only the toolkit's credentials (tenancy's ``/me`` API): whatever
    ``Authorization`` header is sent to it is the toolkit's to judge, so a foreign scheme or
    an unknown bearer is refused with the toolkit's 401 — on the project's routes it would pass
    untouched. Views that render authentication failures claim the header too."""
    setattr(view, CLAIMS_AUTHORIZATION, True)
    return view


def renders_authentication_failure(view: F) -> F:
    """The view answers a refused bearer itself, in its own wire format (``/mcp``: JSON-RPC).

    Such a view claims every ``Authorization`` header (``claims_authorization``). The
    middleware does not answer 401 for such a view: it records the
    ``AuthenticationFailedError`` on ``request.authentication_failure`` and lets the view run
    with tenant, actor and row scope unresolved. The view must answer an unresolved tenant
    with a 401 of its own; tenant-owned querysets refuse to run without one regardless.
    """
    setattr(view, RENDERS_AUTHENTICATION_FAILURE, True)
    return view


COUNTS_OWN_RATE = "tenancy_counts_own_rate"


def counts_own_rate(view: F) -> F:
    """The view keeps its own rate budget (``/mcp``): tenancy's per-member count skips it."""
    setattr(view, COUNTS_OWN_RATE, True)
    return view


def has_marker(view_func: Any, marker: str) -> bool:
    """True if the view function, or the class-based view behind it, carries ``marker``."""
    if getattr(view_func, marker, False):
        return True
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    return bool(view_class is not None and getattr(view_class, marker, False))


# ``idempotency``'s view-metadata protocol: a view carrying this attribute (a reason) is never
# stored or replayed by the Idempotency-Key middleware. tenancy and idempotency never import
# each other, so tenancy writes the documented attribute itself (tests/test_markers_protocol
# pins it to ``idempotency.markers.NEVER_REPLAY``).
IDEMPOTENCY_NEVER_REPLAY = "idempotency_never_replay"


def never_replayed(reason: str) -> Callable[[F], F]:
    """Mark a credential view (login, logout, token creation) as never replayed, with why."""

    def mark(view: F) -> F:
        setattr(view, IDEMPOTENCY_NEVER_REPLAY, reason)
        return view

    return mark


# idempotency's second view attribute: keys sent to the view belong to the acting user.
IDEMPOTENCY_USER_SCOPED_KEYS = "idempotency_user_scoped_keys"


def keys_per_user(view: F) -> F:
    """Idempotency keys sent to this ``/me`` write are the acting user's own, wherever the
    project mounts ``tenancy.urls`` (no path prefix to configure)."""
    setattr(view, IDEMPOTENCY_USER_SCOPED_KEYS, True)
    return view


# Django's ATOMIC_REQUESTS opt-out: ``BaseHandler.make_view_atomic`` skips every alias found in
# the view's ``_non_atomic_requests`` (what ``transaction.non_atomic_requests(using)`` adds to).
DJANGO_NON_ATOMIC_REQUESTS = "_non_atomic_requests"


class EveryDatabase(set[str]):
    """The ``_non_atomic_requests`` of a view that opts out on every alias.

    It contains every alias, including one a project adds to ``DATABASES`` after the view was
    decorated (Django only asks ``alias in view._non_atomic_requests``). It stays a set, so
    ``transaction.non_atomic_requests`` stacked on top still adds to it.
    """

    def __contains__(self, alias: object) -> bool:
        return True


def _opt_out(view: F) -> F:
    setattr(view, DJANGO_NON_ATOMIC_REQUESTS, EveryDatabase())
    return view


def handles_own_transactions(view: F) -> F:
    """The view is never wrapped in the project's ``ATOMIC_REQUESTS`` transaction, on any alias.

    For views that open their transactions themselves, where they belong: ``/mcp`` and ``/a2a``
    (async, or handing connections back while a tool runs; a tool call's write commits with
    its idempotency record in ``IdempotentUnit``), the OAuth endpoints, tenancy's credential
    views and the health probes. They then behave the same whatever ``ATOMIC_REQUESTS`` says;
    without this Django answers every request to an async view with a 500 ("You cannot use
    ATOMIC_REQUESTS with async views"). Works on a view function and on a class-based view
    (it marks ``dispatch``, which ``as_view`` copies onto the view function).
    """
    if isinstance(view, type):
        marked: F = method_decorator(_opt_out, name="dispatch")(view)
        return marked
    return _opt_out(view)


def handles_transactions_on(view_func: Any, alias: str) -> bool:
    """True if Django leaves ``view_func`` outside ``ATOMIC_REQUESTS`` on ``alias``."""
    return alias in getattr(view_func, DJANGO_NON_ATOMIC_REQUESTS, ())
