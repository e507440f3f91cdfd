"""Customer reads: list (by name, keyset-paged), get, and name-or-id resolution for tools."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from cluck.caller import Caller
from cluck.errors import CluckError, NotFoundError
from cluck.models import Customer
from cluck.selectors.paging import (
    Page,
    check_limit,
    is_db_id,
    keyset_page,
    position_int,
    position_str,
)

CUSTOMER_CURSOR_KEYS = ("name", "id")
# How many candidates an ambiguous or missing name reports back (enough to pick from, bounded).
RESOLVE_CANDIDATES_MAX = 10


class CustomerNotFoundError(NotFoundError):
    """Missing and other-farm customers are indistinguishable on purpose."""

    code = "Customer.NotFound"
    default_message = "Customer not found."


class CustomerAmbiguousError(CluckError):
    """A name matched more than one customer; ``data["candidates"]`` lists them."""

    code = "Customer.Ambiguous"
    http_status = 422
    default_message = "More than one customer has that name; pass the customer id."


def customer_list(
    *,
    caller: Caller,
    search: str | None = None,
    limit: int,
    cursor_position: dict[str, Any] | None = None,
) -> Page[Customer]:
    """Customers of the caller's farm by name (then id), optionally filtered by a name fragment.

    One query, ``limit + 1`` rows at most.
    """
    check_limit(limit)
    qs = Customer.objects.for_tenant(caller.tenant)
    if search and search.strip():
        qs = qs.filter(name__icontains=search.strip())
    if cursor_position is not None:
        name = position_str(cursor_position, "name")
        after_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(name__gt=name) | Q(name=name, id__gt=after_id))
    rows = list(qs.order_by("name", "id")[: limit + 1])
    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda c: {"name": c.name, "id": c.pk},
        project=lambda c: c,
    )


def customer_get(*, caller: Caller, customer_id: int) -> Customer:
    """One customer of the caller's farm.

    Raises:
        CustomerNotFoundError: missing, or belonging to another farm.
    """
    if not is_db_id(customer_id):
        raise CustomerNotFoundError()
    customer = Customer.objects.for_tenant(caller.tenant).filter(pk=customer_id).first()
    if customer is None:
        raise CustomerNotFoundError()
    return customer


def customer_resolve(*, caller: Caller, name_or_id: str | int) -> Customer:
    """Exactly one customer by id or by (case-insensitive, trimmed) exact name.

    A numeric string is tried as an id first, then as a name (a customer may be called "7").

    Raises:
        CustomerNotFoundError: nothing matches; ``data["suggestions"]`` holds up to ten names
            containing the text.
        CustomerAmbiguousError: several customers share the name; ``data["candidates"]``.
    """
    farm_customers = Customer.objects.for_tenant(caller.tenant)
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        return customer_get(caller=caller, customer_id=name_or_id)
    text = str(name_or_id).strip()
    if not text:
        raise CustomerNotFoundError("A customer name or id is required.")
    if text.isdigit() and len(text) < 19:
        by_id = farm_customers.filter(pk=int(text)).first()
        if by_id is not None:
            return by_id
    matches = list(
        farm_customers.filter(name__iexact=text).order_by("id")[: RESOLVE_CANDIDATES_MAX + 1]
    )
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise CustomerAmbiguousError(
            candidates=[
                {"customerId": c.pk, "name": c.name, "phone": c.phone}
                for c in matches[:RESOLVE_CANDIDATES_MAX]
            ]
        )
    suggestions = list(
        farm_customers.filter(name__icontains=text)
        .order_by("name", "id")
        .values_list("name", flat=True)[:RESOLVE_CANDIDATES_MAX]
    )
    raise CustomerNotFoundError(f"No customer is called {text!r}.", suggestions=suggestions)
