"""Farm (tenant) provisioning and its fixed structure: houses and the default egg grades."""

from __future__ import annotations

from django.db import transaction

from cluck.caller import Caller
from cluck.errors import ConflictError, FieldError
from cluck.grades import DEFAULT_GRADES, GradeSpec
from cluck.models import EggGrade, Farm, House
from cluck.services.audit import audit_record


class FarmCodeTakenError(ConflictError):
    code = "Farm.CodeTaken"
    default_message = "Another farm already uses that code."


class HouseNameTakenError(ConflictError):
    code = "House.NameTaken"
    default_message = "This farm already has a house with that name."


@transaction.atomic
def farm_create(
    *,
    code: str,
    name: str,
    currency_code: str,
    currency_minor_unit: int,
    time_zone: str,
    label: str = "cli:farm_create",
) -> Farm:
    """Create a farm with the default egg-grade set (brief §6.5) and audit ``Account.Create``.

    ``label`` names the system actor doing it (farms are created by commands, not by members).

    Raises:
        FieldError: the code, currency or time zone is malformed.
        FarmCodeTakenError: the code is in use.
    """
    farm = Farm(
        code=code,
        name=name,
        currency_code=currency_code,
        currency_minor_unit=currency_minor_unit,
        time_zone=time_zone,
    )
    _check_farm(farm)
    if Farm.objects.filter(code=code).exists():
        raise FarmCodeTakenError()
    farm.save()
    caller = Caller.system(farm, label=label)
    created = egg_grades_provision(caller=caller)
    audit_record(
        caller=caller,
        action="Account.Create",
        entity_type="Farm",
        entity_id=farm.pk,
        details={"code": farm.code, "grades": [grade.name for grade in created]},
    )
    return farm


def _check_farm(farm: Farm) -> None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    from django.core.exceptions import ValidationError

    errors: list[dict[str, str]] = []
    try:
        farm.full_clean(validate_unique=False)
    except ValidationError as exc:
        for field_name, messages in exc.message_dict.items():
            errors.extend(
                {"field": field_name, "code": f"Farm.{field_name}.Invalid", "message": message}
                for message in messages
            )
    if len(farm.currency_code) != 3 or not farm.currency_code.isalpha():
        errors.append(
            {
                "field": "currency_code",
                "code": "Farm.CurrencyCode.Invalid",
                "message": "An ISO 4217 code such as PHP.",
            }
        )
    try:
        ZoneInfo(farm.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        errors.append(
            {
                "field": "time_zone",
                "code": "Farm.TimeZone.Invalid",
                "message": "An IANA time zone such as Asia/Manila.",
            }
        )
    if errors:
        raise FieldError(errors)


@transaction.atomic
def egg_grades_provision(
    *, caller: Caller, specs: tuple[GradeSpec, ...] = DEFAULT_GRADES
) -> list[EggGrade]:
    """Create whichever of ``specs`` the farm lacks (by name); returns the grades created.

    Idempotent, so seeders can call it on an existing farm. A farm that already has a
    Cracked/Dirty counter grade under another name keeps it: the spec of that kind is skipped
    (at most one grade per counter kind).
    """
    farm = caller.farm
    existing = EggGrade.objects.for_tenant(caller.tenant)
    names = set(existing.values_list("name", flat=True))
    counter_kinds = set(existing.exclude(kind=EggGrade.Kind.MANUAL).values_list("kind", flat=True))
    created: list[EggGrade] = []
    for order, spec in enumerate(specs, start=1):
        if spec.name in names or (spec.kind != EggGrade.Kind.MANUAL and spec.kind in counter_kinds):
            continue
        created.append(
            EggGrade.objects.create(
                farm=farm,
                name=spec.name,
                grade_type=spec.grade_type,
                kind=spec.kind,
                sort_order=order * 10,
                is_saleable=spec.is_saleable,
                unit_price_minor=spec.unit_price_minor(
                    farm.currency_code, farm.currency_minor_unit
                ),
            )
        )
    return created


@transaction.atomic
def house_create(*, caller: Caller, name: str) -> House:
    """Add a house to the caller's farm and audit ``House.Create``.

    Raises:
        FieldError: the name is blank or longer than 100 characters.
        HouseNameTakenError: the farm already has a house with that name.
    """
    cleaned = (name or "").strip()
    if not cleaned or len(cleaned) > 100:
        raise FieldError(
            [
                {
                    "field": "name",
                    "code": "House.Name.Invalid",
                    "message": "A house name is 1–100 characters.",
                }
            ]
        )
    if House.objects.for_tenant(caller.tenant).filter(name=cleaned).exists():
        raise HouseNameTakenError()
    house = House.objects.create(farm=caller.farm, name=cleaned)
    audit_record(caller=caller, action="House.Create", entity_type="House", entity_id=house.pk)
    return house
