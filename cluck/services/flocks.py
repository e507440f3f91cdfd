"""Flock writes (create, deplete, archive) and the write-side flock-scope guard."""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import F

from cluck.caller import Caller
from cluck.errors import CluckError, ConflictError, FieldError, NotFoundError
from cluck.models import Flock, House
from cluck.selectors.flocks import FlockNotFoundError, ScopeUnresolvedError
from cluck.selectors.paging import is_db_id
from cluck.services.audit import audit_record


class FlockScopeNotAssignedError(CluckError):
    code = "FlockScope.NotAssigned"
    http_status = 422
    default_message = "You are not assigned to this flock — ask an owner or manager."


class FlockNotActiveError(ConflictError):
    code = "Flock.NotActive"
    default_message = "Only an active flock can be depleted."


class FlockAlreadyArchivedError(ConflictError):
    code = "Flock.AlreadyArchived"
    default_message = "The flock is already archived."


class HouseNotFoundError(NotFoundError):
    code = "House.NotFound"
    default_message = "House not found."


def flock_scope_check(*, caller: Caller, flock_id: int) -> None:
    """The write-side guard (brief §5.5), run *before* the flock is loaded.

    Fails closed on an unresolved actor or scope. Unlike reads, an unassigned flock of the
    caller's own farm is not hidden: the Worker is told they are not assigned (422). Any id the
    scope does not list — own farm, other farm or missing — gets that same answer, so the
    guard reveals nothing about other farms.

    Raises:
        ScopeUnresolvedError: the caller's actor or flock scope is unresolved.
        FlockScopeNotAssignedError: a restricted Worker and a flock outside their assignments.
    """
    if not caller.actor.is_resolved or not caller.scope.is_resolved:
        raise ScopeUnresolvedError()
    if not caller.scope.allows(flock_id):
        raise FlockScopeNotAssignedError()


@transaction.atomic
def flock_create(
    *,
    caller: Caller,
    house_id: int,
    name: str,
    breed: str,
    placement_date: dt.date,
    initial_count: int,
) -> Flock:
    """Place a new Active flock in a house of the caller's farm; audit ``Flock.Create``.

    Duplicate names are legal (a house's next flock often keeps the name).

    Raises:
        FieldError: every failing field (name, breed, placementDate, initialCount).
        HouseNotFoundError: the house is missing or another farm's.
    """
    errors: list[dict[str, str]] = []
    clean_name = (name or "").strip()
    clean_breed = (breed or "").strip()
    if not clean_name or len(clean_name) > 200:
        errors.append(
            {"field": "name", "code": "Flock.Name.Invalid", "message": "1–200 characters."}
        )
    if not clean_breed or len(clean_breed) > 100:
        errors.append(
            {"field": "breed", "code": "Flock.Breed.Invalid", "message": "1–100 characters."}
        )
    if placement_date > caller.farm.today():
        errors.append(
            {
                "field": "placementDate",
                "code": "Flock.PlacementDate.NotFuture",
                "message": "The placement date cannot be in the future.",
            }
        )
    if not 0 < initial_count < 2**31:
        errors.append(
            {
                "field": "initialCount",
                "code": "Flock.InitialCount.Positive",
                "message": "The initial bird count must be positive.",
            }
        )
    if errors:
        raise FieldError(errors)
    house = (
        House.objects.for_tenant(caller.tenant).filter(pk=house_id).first()
        if is_db_id(house_id)
        else None
    )
    if house is None:
        raise HouseNotFoundError()
    flock = Flock.objects.create(
        farm=caller.farm,
        house=house,
        name=clean_name,
        breed=clean_breed,
        placement_date=placement_date,
        initial_count=initial_count,
    )
    audit_record(caller=caller, action="Flock.Create", entity_type="Flock", entity_id=flock.pk)
    return flock


def _locked_flock(caller: Caller, flock_id: int) -> Flock:
    flock_scope_check(caller=caller, flock_id=flock_id)
    flock = (
        Flock.objects.for_tenant(caller.tenant).select_for_update().filter(pk=flock_id).first()
        if is_db_id(flock_id)
        else None
    )
    if flock is None:
        raise FlockNotFoundError()
    return flock


@transaction.atomic
def flock_deplete(*, caller: Caller, flock_id: int, on: dt.date) -> Flock:
    """Active → Depleted as of ``on``; audit ``Flock.Deplete``. Production may still be
    back-filled up to ``on``.

    Raises:
        FlockNotFoundError, FlockScopeNotAssignedError, FlockNotActiveError.
    """
    flock = _locked_flock(caller, flock_id)
    if flock.status != Flock.Status.ACTIVE:
        raise FlockNotActiveError()
    flock.status = Flock.Status.DEPLETED
    flock.depleted_on = on
    flock.version = F("version") + 1
    flock.save(update_fields=["status", "depleted_on", "version"])
    flock.refresh_from_db(fields=["version"])
    audit_record(
        caller=caller,
        action="Flock.Deplete",
        entity_type="Flock",
        entity_id=flock.pk,
        details={"on": on.isoformat()},
    )
    return flock


@transaction.atomic
def flock_archive(*, caller: Caller, flock_id: int, on: dt.date) -> Flock:
    """Active or Depleted → Archived as of ``on``; audit ``Flock.Archive``. No production can
    be recorded on an archived flock.

    Raises:
        FlockNotFoundError, FlockScopeNotAssignedError, FlockAlreadyArchivedError.
    """
    flock = _locked_flock(caller, flock_id)
    if flock.status == Flock.Status.ARCHIVED:
        raise FlockAlreadyArchivedError()
    flock.status = Flock.Status.ARCHIVED
    flock.archived_on = on
    flock.version = F("version") + 1
    flock.save(update_fields=["status", "archived_on", "version"])
    flock.refresh_from_db(fields=["version"])
    audit_record(
        caller=caller,
        action="Flock.Archive",
        entity_type="Flock",
        entity_id=flock.pk,
        details={"on": on.isoformat()},
    )
    return flock
