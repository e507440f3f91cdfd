from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response

from orgs.models import role_of
from projects import services
from projects.models import Project
from projects.permissions import ProjectPermission
from projects.serializers import ProjectSerializer


@login_required
def home(request: HttpRequest) -> HttpResponse:
    return HttpResponse(f"Signed in as {request.user}.", content_type="text/plain")


class ProjectViewSet(viewsets.ModelViewSet):
    """The projects of the caller's organizations."""

    serializer_class = ProjectSerializer
    permission_classes = [IsAuthenticated, ProjectPermission]

    def get_queryset(self) -> QuerySet[Project]:
        projects = Project.objects.visible_to(self.request.user).select_related("organization")
        if self.action == "list" and "archived" not in self.request.query_params:
            projects = projects.active()
        return projects

    def perform_create(self, serializer: serializers.BaseSerializer[Project]) -> None:
        organization = serializer.validated_data["organization"]
        if role_of(self.request.user, organization) is None:
            raise PermissionDenied("You are not a member of this organization.")
        try:
            serializer.instance = services.project_create(
                organization=organization,
                user=self.request.user,
                name=serializer.validated_data["name"],
                description=serializer.validated_data.get("description", ""),
            )
        except ValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from exc

    @action(detail=True, methods=["post"])
    def archive(self, request: Request, pk: str | None = None) -> Response:
        project = services.project_archive(project=self.get_object())
        return Response(self.get_serializer(project).data)
