"""What the farm's MCP modules share: the domain caller, paging arguments, reply models."""

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
