from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from orgs.models import Membership, role_of

# Who may archive or delete a project.
MANAGERS = {Membership.Role.OWNER, Membership.Role.ADMIN}


class ProjectPermission(BasePermission):
    """Members read and create; owners and admins change and delete."""

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        if request.method in SAFE_METHODS:
            return True
        return role_of(request.user, obj.organization) in MANAGERS
