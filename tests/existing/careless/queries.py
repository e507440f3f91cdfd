"""Queries that forget the organization, the way a hurried author would: the plain
``Project.objects``, a related lookup from the organization, ``select_related``, raw SQL,
``values`` and ``aggregate``."""

from typing import Any

from django.db import connection
from django.db.models import Count

from orgs.models import Organization
from projects.models import Project


def careless_read() -> dict[str, Any]:
    """The organizations whose projects each query reached (their ids), and the count."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT organization_id FROM projects_project")
        raw = sorted(row[0] for row in cursor.fetchall())
    working = Organization.objects.filter(projects__isnull=False).values_list("pk", flat=True)
    joined = Project.objects.select_related("organization")
    return {
        "all": sorted({project.organization_id for project in Project.objects.all()}),
        "related": sorted(set(working)),
        "select_related": sorted({project.organization.pk for project in joined}),
        "raw": raw,
        "values": sorted({row["organization_id"] for row in Project.objects.values()}),
        "aggregate": Project.objects.aggregate(n=Count("id"))["n"],
    }
