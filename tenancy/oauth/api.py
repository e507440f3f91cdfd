"""REST for a member's authorized OAuth clients (under ``tenancy.urls``: ``me/authorizations/``).

Listed and revoked per membership, like personal tokens: a bearer of one tenant sees and ends
only the authorizations granted for that tenant.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tenancy._schema import extend_schema
from tenancy.api import _problems
from tenancy.exceptions import TokenNotFoundError
from tenancy.markers import claims_authorization, handles_own_transactions, keys_per_user
from tenancy.oauth.models import ClientAuthorization
from tenancy.oauth.services import authorization_revoke, live_authorizations
from tenancy.permissions import IsTenantMember, request_actor


def _membership_id(request: Request) -> int:
    membership_id = request_actor(request).membership_id
    if membership_id is None:
        raise TokenNotFoundError()
    return membership_id


class AuthorizationSerializer(serializers.Serializer[ClientAuthorization]):
    id = serializers.IntegerField()
    clientId = serializers.CharField(source="application.client_id")
    clientName = serializers.CharField(source="application.name")
    registration = serializers.CharField(source="application.registration_source")
    scopes = serializers.ListField(child=serializers.CharField())
    resource = serializers.CharField()
    createdAt = serializers.DateTimeField(source="created_at")


class AuthorizationListSerializer(serializers.Serializer[Any]):
    items = AuthorizationSerializer(many=True)
    complete = serializers.BooleanField()


@handles_own_transactions
@claims_authorization
class AuthorizationListApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(
        responses={200: AuthorizationListSerializer, **_problems(401)},
        summary="The OAuth clients I authorized in this tenant.",
    )
    def get(self, request: Request) -> Response:
        found = list(live_authorizations(membership_id=_membership_id(request))[:501])
        body = {"items": found[:500], "complete": len(found) <= 500}
        return Response(AuthorizationListSerializer(body).data)


@handles_own_transactions
@claims_authorization
@keys_per_user
class AuthorizationRevokeApi(APIView):
    permission_classes = [IsTenantMember]

    @extend_schema(
        request=None,
        responses={204: None, **_problems(401, 404)},
        summary="Revoke one authorized client.",
    )
    def delete(self, request: Request, authorization_id: int) -> Response:
        authorization = ClientAuthorization.objects.filter(
            pk=authorization_id, membership_id=_membership_id(request)
        ).first()
        if authorization is None:
            raise TokenNotFoundError()
        authorization_revoke(authorization=authorization)
        return Response(status=status.HTTP_204_NO_CONTENT)
