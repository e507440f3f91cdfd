"""Harbor's MCP tools, discovered at start-up like admin.py."""

from typing import Annotated

from mcp_tools import CallContext, ToolError, tool
from pydantic import BaseModel, Field

from harbor.berths.models import Berth
from harbor.orgs.roles import MANAGE_BERTHS


class BerthOut(BaseModel):
    id: int
    name: str
    length_cm: int


class BerthList(BaseModel):
    berths: list[BerthOut]


class BerthAdded(BaseModel):
    berth: BerthOut


def _out(berth: Berth) -> BerthOut:
    return BerthOut(id=berth.pk, name=berth.name, length_cm=berth.length_cm)


@tool(
    name="harbor_list_berths",
    read_only=True,
    description="This organization's berths, by name (at most 200).",
)
def list_berths(ctx: CallContext) -> BerthList:
    berths = Berth.scoped.for_tenant(ctx.tenant)[:200]
    return BerthList(berths=[_out(berth) for berth in berths])


@tool(
    name="harbor_add_berth",
    policy=MANAGE_BERTHS,
    description="Add a berth to this organization (owners). Reuse an idempotencyKey only to retry.",
)
def add_berth(
    ctx: CallContext,
    *,
    name: Annotated[str, Field(min_length=1, max_length=50)],
    length_cm: Annotated[int, Field(gt=0, le=100_000)],
) -> BerthAdded:
    if Berth.scoped.for_tenant(ctx.tenant).filter(name=name).exists():
        raise ToolError("Berth.NameTaken", f"This organization has a berth named {name}.")
    berth = Berth.objects.create(organization=ctx.tenant.instance, name=name, length_cm=length_cm)
    return BerthAdded(berth=_out(berth))
