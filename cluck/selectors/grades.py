"""Egg-grade reads: the farm's grade list (keyset-paged) and name-or-id resolution."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from cluck.caller import Caller
from cluck.errors import CluckError, NotFoundError
from cluck.models import EggGrade
from cluck.money import Money
from cluck.selectors.paging import Page, check_limit, is_db_id, keyset_page, position_int

GRADE_CURSOR_KEYS = ("sort", "id")
RESOLVE_NAMES_MAX = 20


class EggGradeNotFoundError(NotFoundError):
    code = "EggGrade.NotFound"
    default_message = "Egg grade not found."


class EggGradeAmbiguousError(CluckError):
    code = "EggGrade.Ambiguous"
    http_status = 422
    default_message = "More than one egg grade has that name; pass the grade id."


@dataclass(frozen=True)
class EggGradeView:
    egg_grade_id: int
    name: str
    grade_type: str
    kind: str
    sort_order: int
    is_saleable: bool
    is_active: bool
    unit_price: Money | None  # the list price; None when hidden (Caller.sees_money)
    # Whether a daily entry's grade lines may name it (active, saleable, Manual kind).
    is_recordable: bool
    money_visible: bool


def is_recordable(grade: EggGrade) -> bool:
    """Manual grade lines may reference only active, saleable, Manual-kind grades; the
    Cracked/Dirty grades are fed by the entry's counters instead (brief §6.4, #396)."""
    return grade.is_active and grade.is_saleable and grade.kind == EggGrade.Kind.MANUAL


def _view(grade: EggGrade, caller: Caller) -> EggGradeView:
    return EggGradeView(
        egg_grade_id=grade.pk,
        name=grade.name,
        grade_type=grade.grade_type,
        kind=grade.kind,
        sort_order=grade.sort_order,
        is_saleable=grade.is_saleable,
        is_active=grade.is_active,
        unit_price=Money.of(grade.unit_price_minor, caller.farm) if caller.sees_money else None,
        is_recordable=is_recordable(grade),
        money_visible=caller.sees_money,
    )


def egg_grade_list(
    *, caller: Caller, limit: int, cursor_position: dict[str, Any] | None = None
) -> Page[EggGradeView]:
    """The farm's grades in display order (sort order, then id). One query, ``limit + 1`` rows.

    Grades are not flock-owned, so the flock scope does not narrow them.
    """
    check_limit(limit)
    qs = EggGrade.objects.for_tenant(caller.tenant)
    if cursor_position is not None:
        sort = position_int(cursor_position, "sort")
        after_id = position_int(cursor_position, "id")
        qs = qs.filter(Q(sort_order__gt=sort) | Q(sort_order=sort, id__gt=after_id))
    rows = list(qs.order_by("sort_order", "id")[: limit + 1])
    return keyset_page(
        rows,
        limit=limit,
        position_of=lambda g: {"sort": g.sort_order, "id": g.pk},
        project=lambda g: _view(g, caller),
    )


def egg_grade_resolve(*, caller: Caller, name_or_id: str | int) -> EggGradeView:
    """Exactly one grade of the farm by id or exact (trimmed, case-insensitive) name.

    Any grade resolves, whatever its state; whether it may be *used* (e.g. on a daily entry)
    is the using service's rule, not the resolver's.

    Raises:
        EggGradeNotFoundError: no grade matches; the message and ``data["validNames"]`` list
            the farm's recordable grade names.
        EggGradeAmbiguousError: names differing only in case; ``data["candidates"]``.
    """
    grades = EggGrade.objects.for_tenant(caller.tenant)
    if isinstance(name_or_id, int) and not isinstance(name_or_id, bool):
        by_pk = grades.filter(pk=name_or_id).first() if is_db_id(name_or_id) else None
        if by_pk is None:
            raise EggGradeNotFoundError(validNames=_valid_names(caller))
        return _view(by_pk, caller)
    text = str(name_or_id).strip()
    if text.isdigit() and len(text) < 19:
        by_id = grades.filter(pk=int(text)).first()
        if by_id is not None:
            return _view(by_id, caller)
    matches = (
        list(grades.filter(name__iexact=text).order_by("id")[: RESOLVE_NAMES_MAX + 1])
        if text
        else []
    )
    if len(matches) == 1:
        return _view(matches[0], caller)
    if matches:
        raise EggGradeAmbiguousError(
            candidates=[
                {"eggGradeId": g.pk, "name": g.name, "kind": g.kind, "active": g.is_active}
                for g in matches[:RESOLVE_NAMES_MAX]
            ]
        )
    names = _valid_names(caller)
    listed = ", ".join(repr(n) for n in names) or "none"
    raise EggGradeNotFoundError(
        f"No egg grade is called {text!r}. Grades you can record: {listed}.", validNames=names
    )


def _valid_names(caller: Caller) -> list[str]:
    return list(
        EggGrade.objects.for_tenant(caller.tenant)
        .filter(is_active=True, is_saleable=True, kind=EggGrade.Kind.MANUAL)
        .order_by("sort_order", "id")
        .values_list("name", flat=True)[:RESOLVE_NAMES_MAX]
    )
