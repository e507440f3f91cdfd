"""The tracker's MCP tools, discovered at start-up like admin.py."""

from typing import Annotated

from django.core.exceptions import ValidationError
from mcp_tools import CallContext, ToolError, tool
from pydantic import BaseModel, Field

from orgs.roles import MANAGE_PROJECTS
from projects import services
from projects.models import Project


class ProjectOut(BaseModel):
    id: int
    name: str
    description: str
    archived: bool


class ProjectList(BaseModel):
    projects: list[ProjectOut]


class ProjectChanged(BaseModel):
    project: ProjectOut


def _out(project: Project) -> ProjectOut:
    return ProjectOut(
        id=project.pk,
        name=project.name,
        description=project.description,
        archived=project.archived_at is not None,
    )


@tool(
    name="tracker_list_projects",
    read_only=True,
    description="This organization's active projects, by name (at most 200).",
)
def list_projects(ctx: CallContext) -> ProjectList:
    projects = Project.scoped.for_tenant(ctx.tenant).active().order_by("name")[:200]
    return ProjectList(projects=[_out(project) for project in projects])


@tool(
    name="tracker_create_project",
    description="Start a project in this organization. Reuse an idempotencyKey only to retry.",
)
def create_project(
    ctx: CallContext,
    *,
    name: Annotated[str, Field(min_length=1, max_length=100)],
    description: Annotated[str, Field(max_length=2000)] = "",
) -> ProjectChanged:
    try:
        # The service the REST API uses: the same checks, the same row.
        project = services.project_create(
            organization=ctx.tenant.instance,
            user=ctx.actor.user,
            name=name,
            description=description,
        )
    except ValidationError as exc:
        raise ToolError("Project.NameTaken", " ".join(exc.message_dict["name"])) from exc
    return ProjectChanged(project=_out(project))


@tool(
    name="tracker_archive_project",
    policy=MANAGE_PROJECTS,
    description="Archive one of this organization's projects (owners and admins).",
)
def archive_project(ctx: CallContext, *, project_id: int) -> ProjectChanged:
    project = Project.scoped.for_tenant(ctx.tenant).filter(pk=project_id).first()
    if project is None:
        raise ToolError("Project.NotFound", f"This organization has no project {project_id}.")
    return ProjectChanged(project=_out(services.project_archive(project=project)))
