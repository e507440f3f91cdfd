"""Money: integer minor units inside, ``{"amount": "28250.00", "currency": "PHP"}`` outside.

Rendered once at every boundary (REST and MCP) from the farm's currency minor unit.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, TypedDict


class MoneyJSON(TypedDict):
    amount: str
    currency: str


@dataclass(frozen=True, slots=True)
class Money:
    minor: int
    currency: str
    minor_unit: int

    def __post_init__(self) -> None:
        if not 0 <= self.minor_unit <= 4:
            raise ValueError(f"unsupported currency minor unit {self.minor_unit}")

    @classmethod
    def of(cls, minor: int, farm: Any) -> Money:
        """Money in ``farm``'s currency."""
        return cls(int(minor), farm.currency_code, farm.currency_minor_unit)

    @property
    def amount(self) -> Decimal:
        return Decimal(self.minor).scaleb(-self.minor_unit)

    def as_json(self) -> MoneyJSON:
        quantum = Decimal(1).scaleb(-self.minor_unit)
        return {"amount": str(self.amount.quantize(quantum)), "currency": self.currency}

    def __add__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.minor + other.minor, self.currency, self.minor_unit)

    def __sub__(self, other: Money) -> Money:
        self._same_currency(other)
        return Money(self.minor - other.minor, self.currency, self.minor_unit)

    def _same_currency(self, other: Money) -> None:
        if (self.currency, self.minor_unit) != (other.currency, other.minor_unit):
            raise ValueError(f"cannot combine {self.currency} and {other.currency}")


def parse_amount(amount: str | Decimal, minor_unit: int) -> int:
    """Decimal string → minor units; refuses more decimals than the currency has."""
    value = Decimal(str(amount))
    scaled = value.scaleb(minor_unit)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"amount has more than {minor_unit} decimal places")
    return int(scaled)
