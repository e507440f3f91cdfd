"""The default egg-grade set every new farm is provisioned with (brief §6.5).

Prices are list prices per egg in the farm's currency, given per currency where the demo knows
a sensible figure; any other currency gets ``DEFAULT_PRICE_CURRENCY``'s figures scaled to its
minor unit (a starting point an owner is expected to edit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from cluck.models import EggGrade

DEFAULT_PRICE_CURRENCY = "PHP"


@dataclass(frozen=True)
class GradeSpec:
    name: str
    grade_type: str
    kind: str = EggGrade.Kind.MANUAL
    is_saleable: bool = True
    # Major-unit decimal strings by ISO currency code; unsaleable grades have no price.
    prices: dict[str, str] = field(default_factory=dict)

    def unit_price_minor(self, currency_code: str, minor_unit: int) -> int:
        price = self.prices.get(currency_code) or self.prices.get(DEFAULT_PRICE_CURRENCY)
        if price is None:
            return 0
        scaled = Decimal(price).scaleb(minor_unit).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        return int(scaled)


_SIZE = EggGrade.GradeType.SIZE
_QUALITY = EggGrade.GradeType.QUALITY
_CUSTOM = EggGrade.GradeType.CUSTOM

DEFAULT_GRADES: tuple[GradeSpec, ...] = (
    GradeSpec("Small", _SIZE, prices={"PHP": "7.00", "JPY": "25", "USD": "0.15"}),
    GradeSpec("Medium", _SIZE, prices={"PHP": "8.25", "JPY": "30", "USD": "0.18"}),
    GradeSpec("Large", _SIZE, prices={"PHP": "9.50", "JPY": "35", "USD": "0.21"}),
    GradeSpec("Jumbo", _SIZE, prices={"PHP": "10.75", "JPY": "40", "USD": "0.24"}),
    GradeSpec("Seconds", _QUALITY, prices={"PHP": "5.50", "JPY": "20", "USD": "0.10"}),
    GradeSpec(
        "Cracked",
        _QUALITY,
        kind=EggGrade.Kind.CRACKED,
        prices={"PHP": "4.00", "JPY": "15", "USD": "0.08"},
    ),
    GradeSpec(
        "Dirty",
        _QUALITY,
        kind=EggGrade.Kind.DIRTY,
        prices={"PHP": "4.50", "JPY": "15", "USD": "0.08"},
    ),
    GradeSpec("Soft Shell", _QUALITY, is_saleable=False),
    GradeSpec("Discarded", _CUSTOM, is_saleable=False),
    GradeSpec("Internal Use", _CUSTOM, is_saleable=False),
)
