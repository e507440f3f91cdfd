"""Writes on projects. Callers check who may write; these keep the data right."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from orgs.models import Organization
from projects.models import Project


def project_create(
    *, organization: Organization, user: Any, name: str, description: str = ""
) -> Project:
    if Project.objects.filter(organization=organization, name__iexact=name).exists():
        raise ValidationError({"name": f"{organization.name} already has a project {name!r}."})
    return Project.objects.create(
        organization=organization, name=name, description=description, created_by=user
    )


def project_archive(*, project: Project) -> Project:
    if project.archived_at is None:
        project.archived_at = timezone.now()
        project.save(update_fields=["archived_at"])
    return project
