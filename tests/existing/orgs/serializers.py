from rest_framework import serializers

from orgs.models import Organization


class OrganizationSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Organization
        fields = ["slug", "name", "role"]

    def get_role(self, organization: Organization) -> str | None:
        roles = self.context.get("roles", {})
        return roles.get(organization.pk)
