"""Field checks shared by the commerce services: every failing field is collected, then one
``FieldError`` lists them all (a client fixes a form in one round trip)."""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING

from cluck.errors import FieldError
from cluck.money import parse_amount

if TYPE_CHECKING:
    from cluck.models import Farm

# Largest money value (minor units) a single amount, line or order may reach: far below the
# BIGINT ceiling so that sums over many orders cannot overflow either.
MONEY_MINOR_MAX = 10**15
_AMOUNT_SHAPE = re.compile(r"^\d{1,16}(\.\d{1,4})?$")


def _storable(text: str) -> bool:
    """PostgreSQL text refuses NUL and lone surrogates; refuse them here as a 400, not a 500."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class FieldErrors:
    """Collects ``{field, code, message}`` entries; ``raise_if_any()`` raises one FieldError."""

    def __init__(self) -> None:
        self.errors: list[dict[str, str]] = []

    def add(self, field: str, code: str, message: str) -> None:
        self.errors.append({"field": field, "code": code, "message": message})

    def raise_if_any(self) -> None:
        if self.errors:
            raise FieldError(self.errors)

    def text(
        self,
        value: str | None,
        *,
        field: str,
        code_prefix: str,
        max_length: int,
        required: bool,
        label: str,
    ) -> str | None:
        """Trim; blank → ``None``; enforce presence and length."""
        cleaned = value.strip() if isinstance(value, str) else None
        if not cleaned:
            if required:
                self.add(field, f"{code_prefix}.Required", f"{label} is required.")
            return None
        if not _storable(cleaned):
            self.add(field, f"{code_prefix}.Invalid", f"{label} contains invalid characters.")
            return None
        if len(cleaned) > max_length:
            self.add(
                field,
                f"{code_prefix}.TooLong",
                f"{label} must be at most {max_length} characters.",
            )
        return cleaned

    def amount(
        self,
        value: str,
        *,
        field: str,
        code_prefix: str,
        minor_unit: int,
        allow_zero: bool,
        label: str,
    ) -> int | None:
        """A decimal string (``"12.50"``) → minor units of a currency with ``minor_unit``."""
        if not isinstance(value, str) or not _AMOUNT_SHAPE.match(value.strip()):
            self.add(
                field,
                f"{code_prefix}.Invalid",
                f'{label} must be a non-negative decimal string such as "12.50".',
            )
            return None
        try:
            minor = parse_amount(value.strip(), minor_unit)
        except ValueError:
            self.add(
                field,
                f"{code_prefix}.TooPrecise",
                f"{label} has more than {minor_unit} decimal places for this currency.",
            )
            return None
        if minor > MONEY_MINOR_MAX:
            self.add(field, f"{code_prefix}.TooLarge", f"{label} is too large.")
            return None
        if minor == 0 and not allow_zero:
            self.add(field, f"{code_prefix}.NotPositive", f"{label} must be greater than zero.")
            return None
        return minor

    def not_future(
        self, value: dt.date, *, today: dt.date, field: str, code: str, label: str
    ) -> None:
        if value > today:
            self.add(field, code, f"{label} cannot be after the farm's today ({today}).")

    def not_too_old(
        self, value: dt.date, *, farm: Farm, today: dt.date, field: str, code: str, label: str
    ) -> None:
        """The farm's late-entry grace: ``value`` no earlier than ``late_entry_days`` before
        ``today`` (``Farm.earliest_entry_date``)."""
        earliest = farm.earliest_entry_date(today)
        if value < earliest:
            self.add(
                field,
                code,
                f"{label} cannot be before {earliest} (the farm accepts entries up to "
                f"{farm.late_entry_days} days late).",
            )
