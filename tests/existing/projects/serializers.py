from rest_framework import serializers

from orgs.models import Organization
from projects.models import Project


class ProjectSerializer(serializers.ModelSerializer):
    organization = serializers.SlugRelatedField(
        slug_field="slug", queryset=Organization.objects.all()
    )
    archived = serializers.SerializerMethodField()

    class Meta:
        model = Project
        fields = ["id", "organization", "name", "description", "created_at", "archived"]
        read_only_fields = ["created_at"]

    def get_archived(self, project: Project) -> bool:
        return project.archived_at is not None
