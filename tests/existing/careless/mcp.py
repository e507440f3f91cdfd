"""Careless tools: every query forgets the organization; only PostgreSQL's row-level security
keeps the other organizations' projects out."""

from typing import Literal

from mcp_tools import CallContext, tool
from pydantic import BaseModel

from careless.queries import careless_read
from projects.models import Project


class Seen(BaseModel):
    """The organizations whose projects each careless query reached."""

    all: list[int]
    related: list[int]
    select_related: list[int]
    raw: list[int]
    values: list[int]
    aggregate: int


@tool(
    name="careless_read",
    read_only=True,
    task_support="optional",  # a task on the worker when the client asks for one
    description="Reads the projects of every organization it can reach.",
)
def read(ctx: CallContext) -> Seen:
    ctx.continue_as_task()
    return Seen(**careless_read())


class Changed(BaseModel):
    rows: int


@tool(
    name="careless_write",
    description="Changes the projects of every organization it can reach, or plants one.",
)
def write(
    ctx: CallContext,
    *,
    mode: Literal["update", "delete", "bulk_create"],
    organization_id: int = 0,
) -> Changed:
    if mode == "update":
        return Changed(rows=Project.objects.update(description="careless"))
    if mode == "delete":
        return Changed(rows=Project.objects.filter(name="victim").delete()[0])
    planted = Project.objects.bulk_create(
        [Project(organization_id=organization_id, name="planted")]
    )
    return Changed(rows=len(planted))
