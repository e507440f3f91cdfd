"""What the farm's MCP modules share: the domain caller, paging arguments, reply models, and
the stable error codes several tools answer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from cluck.api.base import encode_cursor
from cluck.caller import Caller
from cluck.money import Money
from mcp_tools import CallContext

# MCP reads are smaller than REST pages: a model reads every row it is given.
PAGE_DEFAULT = 50
PAGE_MAX = 200

Limit = Annotated[
    int, Field(ge=1, le=PAGE_MAX, description=f"Page size, 1..{PAGE_MAX} (default {PAGE_DEFAULT}).")
]
Cursor = Annotated[
    str | None,
    Field(max_length=512, description="nextCursor from the previous page, to continue."),
]


# The tools' own stable error codes (the tool reference lists them under each tool, with the
# framework's Tool.* and Idempotency.* codes). A fuzz guard checks no tool answers anything else.
BAD_CURSOR = {
    "Validation.Failed": "`cursor` is not one this tool handed out (data.errors: `cursor`)."
}
FLOCK_NAME = {
    "Flock.NotFound": "No flock you can access has that name or id.",
    "Flock.Ambiguous": "Several flocks have that name: data.candidates lists them; pass the "
    "flockId.",
}
ENTRY_CHECKS = {
    "FlockScope.NotAssigned": "You are restricted to assigned flocks and this is not one.",
    "DailyEntry.DateBeforePlacement": "The day precedes the flock's placement "
    "(data.placementDate).",
    "DailyEntry.MortalityExceedsBirdsAlive": "More birds died than the flock has alive "
    "(data.birdsAlive).",
}


def caller_of(ctx: CallContext) -> Caller:
    """The service-layer caller for an MCP call: identity only from the call context."""
    return Caller(tenant=ctx.tenant, actor=ctx.actor, scope=ctx.row_scope, channel="mcp")


def next_cursor(position: dict[str, Any] | None) -> str | None:
    return None if position is None else encode_cursor(position)


class Reply(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class MoneyOut(Reply):
    amount: str = Field(
        description='Decimal string in the currency\'s minor unit, e.g. "28250.00".'
    )
    currency: str = Field(description="ISO 4217 code, e.g. PHP.")

    @classmethod
    def of(cls, money: Money) -> MoneyOut:
        return cls(**money.as_json())


def money_out(money: Money | None) -> MoneyOut | None:
    return None if money is None else MoneyOut.of(money)


def hidden_money(description: str) -> Any:
    # Money is absent (not null) for roles outside the money tier (Caller.sees_money).
    return Field(default=None, exclude_if=lambda value: value is None, description=description)
