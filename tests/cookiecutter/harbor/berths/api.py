"""The berths on the REST API: those of the caller's organizations."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers, viewsets

from harbor.berths.models import Berth


class BerthSerializer(serializers.ModelSerializer[Berth]):
    class Meta:
        model = Berth
        fields = ["id", "name", "length_cm"]


class BerthViewSet(viewsets.ReadOnlyModelViewSet[Berth]):
    serializer_class = BerthSerializer
    queryset = Berth.objects.all()

    def get_queryset(self) -> Any:
        return Berth.objects.visible_to(self.request.user)
