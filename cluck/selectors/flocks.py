"""Flock reads: list, get, name-or-id resolution and the scope note — all tenant- and
flock-scope-filtered, all bounded in SQL.

A restricted Worker's unassigned flock is simply absent here (reads 404), exactly like another
farm's flock; the write side decides differently (``cluck.services.flocks.flock_scope_check``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.db.models import F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from cluck.caller import Caller
from cluck.errors import CluckError, FieldError, NotFoundError
from cluck.models import BirdMovement, Flock
from cluck.selectors.paging import (
    Page,
    check_limit,
    is_db_id,
    keyset_page,
    position_int,
    position_str,
)

FLOCK_CURSOR_KEYS = ("name", "id")
# How many names or candidates a failed resolution reports (enough to choose from, bounded).
RESOLVE_NAMES_MAX = 20


class FlockNotFoundError(NotFoundError):
    """Missing, another farm's and (for reads) an unassigned flock are indistinguishable."""

    code = "Flock.NotFound"
    default_message = "Flock not found."


class FlockAmbiguousError(CluckError):
    """Several accessible flocks share the name; ``data["candidates"]`` lists them by id."""

    code = "Flock.Ambiguous"
    http_status = 422
    default_message = "More than one flock has that name; pass the flock id."


class ScopeUnresolvedError(CluckError):
    """A caller whose actor or flock scope was never resolved reaches no flock (fail closed).

    The unresolved row (flock) scope *defaults* to unrestricted, which is why this checks
    ``is_resolved`` and never trusts ``is_unrestricted`` alone.
    """

    code = "Auth.Unauthorized"
    http_status = 401
    default_message = "The caller's identity is not resolved."


@dataclass(frozen=True)
class FlockView:
    flock_id: int
    name: str
    breed: str
    status: str
    house_id: int
    house_name: str
    placement_date: dt.date
    initial_count: int
    birds_alive: int
    depleted_on: dt.date | None
    archived_on: dt.date | None
    accepts_production_today: bool


def flock_scope_filter(caller: Caller, *, field: str = "pk") -> Q:
    """The flock-scope predicate on ``field`` (a flock pk or a ``flock_id`` column).

    Raises:
        ScopeUnresolvedError: the actor or the scope is unresolved.
    """
    if not caller.actor.is_resolved or not caller.scope.is_resolved:
        raise ScopeUnresolvedError()
    if caller.scope.is_unrestricted:
        return Q()
    return Q(**{f"{field}__in": sorted(caller.scope.row_ids)})


def accessible_flocks(caller: Caller) -> QuerySet[Flock]:
    """The caller's farm's flocks that the caller's flock scope reaches."""
    return Flock.objects.for_tenant(caller.tenant).filter(flock_scope_filter(caller))


def _with_birds_alive(qs: QuerySet[Flock], caller: Caller) -> QuerySet[Flock]:
    # A correlated subquery, not a join + GROUP BY, so paging (ORDER BY … LIMIT) stays on the
    # flock rows and each flock's Σ movements is computed in SQL.
    moved = (
        BirdMovement.objects.for_tenant(caller.tenant)
        .filter(flock_id=OuterRef("pk"))
        .order_by()
        .values("flock_id")
        .annotate(total=Sum("quantity"))
        .values("total")
    )
    return qs.select_related("house").annotate(
        birds_alive=F("initial_count")
        - Coalesce(Subquery(moved, output_field=IntegerField()), Value(0))
    )


def _view(flock: Any, today: dt.date) -> FlockView:
    return FlockView(
        flock_id=flock.pk,
        name=flock.name,
        breed=flock.breed,
        status=flock.status,
        house_id=flock.house_id,
        house_name=flock.house.name,
        placement_date=flock.placement_date,
        initial_count=flock.initial_count,
        birds_alive=int(flock.birds_alive),
        depleted_on=flock.depleted_on,
        archived_on=flock.archived_on,
        accepts_production_today=flock.can_record_production_on(today),
    )


def flock_list(
    *,
    caller: Caller,
    status: str | None = None,
    limit: int,
    cursor_position: dict[str, Any] | None = None,
) -> Page[FlockView]:
    """Accessible flocks by name, then id (names collide), optionally of one ``status``.

    One query, at most ``limit + 1`` rows.

    Raises:
        FieldError: ``status`` is not a flock status, ``limit`` is out of range, or the cursor
            position is malformed.
    """
    check_limit(limit)
    qs = accessible_flocks(caller)
    if status is not None:
        if status not in Flock.Status.values:
            raise FieldError(
                [
                    {
                        "field": "status",
                        "code": "Flock.Status.Invalid",
                        "message": f"status is one of {', '.join(Flock.Status.values)}.",
                    }
                ]
            )
        qs = qs.filter(status=status)
    if cursor_position is not None:
        name = position_str(cursor_position, "name")
        after_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(name__gt=name) | Q(name=name, id__gt=after_id))
    rows = list(_with_birds_alive(qs, caller).order_by("name", "id")[: limit + 1])
    today = caller.farm.today()
    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda f: {"name": f.name, "id": f.pk},
        project=lambda f: _view(f, today),
    )


def flock_get(*, caller: Caller, flock_id: int) -> FlockView:
    """One accessible flock.

    Raises:
        FlockNotFoundError: missing, another farm's, or outside the caller's flock scope.
    """
    if not is_db_id(flock_id):
        raise FlockNotFoundError()
    flock = _with_birds_alive(accessible_flocks(caller).filter(pk=flock_id), caller).first()
    if flock is None:
        raise FlockNotFoundError()
    return _view(flock, caller.farm.today())


def flock_resolve(*, caller: Caller, name_or_id: str | int) -> FlockView:
    """Exactly one *accessible* flock by id or by exact (trimmed, case-insensitive) name.

    Names are matched across every status, since a depleted flock may share its name with the
    active one that replaced it. A digit string is tried as an id first, then as a name.

    Raises:
        FlockNotFoundError: nothing accessible matches; the message and ``data["validNames"]``
            list the accessible flock names.
        FlockAmbiguousError: several accessible flocks have the name; ``data["candidates"]``
            is ``[{flockId, name, status, house, placementDate}]`` ordered by id.
    """
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        return flock_get(caller=caller, flock_id=name_or_id)
    text = str(name_or_id).strip()
    flocks = accessible_flocks(caller)
    if text.isdigit() and len(text) < 19:
        by_id = _with_birds_alive(flocks.filter(pk=int(text)), caller).first()
        if by_id is not None:
            return _view(by_id, caller.farm.today())
    matches = (
        list(
            _with_birds_alive(flocks.filter(name__iexact=text), caller).order_by("id")[
                : RESOLVE_NAMES_MAX + 1
            ]
        )
        if text
        else []
    )
    if len(matches) == 1:
        return _view(matches[0], caller.farm.today())
    if matches:
        raise FlockAmbiguousError(
            f"{len(matches)} flocks are called {text!r}; pass one of their ids "
            f"({', '.join(str(f.pk) for f in matches[:RESOLVE_NAMES_MAX])}).",
            candidates=[
                {
                    "flockId": f.pk,
                    "name": f.name,
                    "status": f.status,
                    "house": f.house.name,
                    "placementDate": f.placement_date.isoformat(),
                }
                for f in matches[:RESOLVE_NAMES_MAX]
            ],
        )
    valid = list(
        flocks.order_by("name").values_list("name", flat=True).distinct()[:RESOLVE_NAMES_MAX]
    )
    listed = ", ".join(repr(name) for name in valid) or "none"
    raise FlockNotFoundError(
        f"No accessible flock is called {text!r}. Valid flock names: {listed}.",
        validNames=valid,
    )


def flock_scope_note(*, caller: Caller) -> str | None:
    """A sentence for replies to a flock-restricted caller; ``None`` when unrestricted."""
    flock_scope_filter(caller)  # fails closed on an unresolved caller
    if caller.scope.is_unrestricted:
        return None
    farm_flocks = Flock.objects.for_tenant(caller.tenant)
    total = farm_flocks.count()
    assigned = farm_flocks.filter(flock_scope_filter(caller)).count()
    noun = "flock" if total == 1 else "flocks"
    return f"You are assigned to {assigned} of this farm's {total} {noun}."
