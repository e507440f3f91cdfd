"""REST endpoints of ``tenancy``: login, logout, me, personal access tokens (``tenancy.urls``).

Field names follow the project's nouns, read when the URLconf loads: with the default
``TENANCY_TENANT_NOUN = "tenant"`` the login body is ``{"tenantCode", "email", "password"}``;
a project that calls its tenants stores says ``"store"`` and gets ``storeCode``. Likewise
``TENANCY_ROW_NOUN`` names the row scope in ``me`` (``rowRestricted``, ``assignedRowIds``).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import authenticate
from django.db import transaction
from django.utils import timezone
from django_ratelimit.core import get_usage
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from tenancy import conf
from tenancy._schema import OpenApiResponse, extend_schema
from tenancy.drf_authentication import TenancyAuthentication
from tenancy.events import rate_limited
from tenancy.exceptions import (
    InvalidCredentialsError,
    LoginRateLimitedError,
    TokenLimitReachedError,
    TokenNotFoundError,
)
from tenancy.markers import (
    accepts_superseded_credentials,
    claims_authorization,
    handles_own_transactions,
    ignores_ambient_credentials,
    keys_per_user,
    never_replayed,
)
from tenancy.members import get_membership_model, memberships
from tenancy.middleware import AUTHORIZATION_ATTRIBUTE
from tenancy.models import AccessToken
from tenancy.permissions import IsTenantMember, request_actor
from tenancy.problem_handler import ProblemsByDefault
from tenancy.rates.addresses import rate_key
from tenancy.tokens import digest, issue_session_token, issue_token, revoke_token


def _tenant_model() -> Any:
    from django.apps import apps

    return apps.get_model(conf.get("TENANT_MODEL"))


def _camel(noun: str, suffix: str) -> str:
    head, *rest = noun.strip().split()
    return head.lower() + "".join(word.capitalize() for word in rest) + suffix


def _cap(noun: str) -> str:
    return "".join(word.capitalize() for word in noun.strip().split())


TENANT_NOUN = str(conf.get("TENANT_NOUN"))
ROW_NOUN = str(conf.get("ROW_NOUN"))
TENANT_CODE = _camel(TENANT_NOUN, "Code")
TENANT_NAME = _camel(TENANT_NOUN, "Name")
ROW_RESTRICTED = _camel(ROW_NOUN, "Restricted")
ASSIGNED_ROW_IDS = f"assigned{_cap(ROW_NOUN)}Ids"

LOGIN_RATE_GROUP = "tenancy.login"
# Run for an unknown tenant code or email, so every login failure costs one password hash:
# the time taken must not tell which part was wrong.
_TIMING_EQUALIZER = "tenancy-login-timing-equalizer"


class AuthProblemSerializer(serializers.Serializer[Any]):
    """RFC 9457 problem details (``code`` is the stable machine code)."""

    type = serializers.CharField()
    title = serializers.CharField()
    status = serializers.IntegerField()
    code = serializers.CharField()
    detail = serializers.CharField()


def _problems(*codes: int) -> dict[Any, Any]:
    return {
        (code, "application/problem+json"): OpenApiResponse(AuthProblemSerializer) for code in codes
    }


def _membership_id(request: Request) -> int:
    membership_id = request_actor(request).membership_id
    if membership_id is None:  # IsTenantMember admits only resolved people
        raise TokenNotFoundError()
    return membership_id


LoginInputSerializer = type(
    "LoginInputSerializer",
    (serializers.Serializer,),
    {
        TENANT_CODE: serializers.CharField(max_length=64),
        "email": serializers.EmailField(max_length=254),
        "password": serializers.CharField(max_length=256, trim_whitespace=False),
    },
)


class TokenOutputSerializer(serializers.Serializer[Any]):
    accessToken = serializers.CharField()
    accessTokenExpiry = serializers.DateTimeField()
    tokenType = serializers.CharField()


# Outside ATOMIC_REQUESTS: a refused login raises, DRF's handler then rolls the request
# transaction back, and with it the failed attempt's count in tenancy's counter table.
@handles_own_transactions
@ignores_ambient_credentials
@never_replayed("returns a live bearer token")
class LoginApi(ProblemsByDefault, APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(
        request=LoginInputSerializer,
        responses={200: TokenOutputSerializer, **_problems(400, 401, 429)},
        auth=[],
        summary=f"Exchange {TENANT_NOUN} code, email and password for a short-lived bearer token.",
    )
    def post(self, request: Request) -> Response:
        # Counted here, not by django-ratelimit's decorator: its Ratelimited is a Django
        # PermissionDenied, which DRF's default exception handler answers with 403.
        usage = get_usage(
            request._request,
            group=LOGIN_RATE_GROUP,
            key=rate_key,
            rate=conf.get("LOGIN_RATE"),
            method=["POST"],
            increment=True,
        )
        if usage is not None and usage["should_limit"]:
            rate_limited.send(sender=LoginApi, request=request._request, group=LOGIN_RATE_GROUP)
            raise LoginRateLimitedError(wait=max(1, int(usage["time_left"])))
        data = LoginInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        code = data.validated_data[TENANT_CODE].strip().lower()
        tenant = (
            _tenant_model()
            ._default_manager.filter(**{f"{conf.get('TENANT_CODE_FIELD')}__iexact": code})
            .first()
        )
        email = data.validated_data["email"].strip().lower()
        password = data.validated_data["password"]
        if tenant is None:
            # One answer for an unknown code and a wrong password, at the same cost.
            authenticate(request._request, username=_TIMING_EQUALIZER, password=password)
            raise InvalidCredentialsError()
        user = authenticate(request._request, username=email, password=password)
        if user is None:
            raise InvalidCredentialsError()
        membership = memberships(user=user, tenant=tenant, live=True).first()
        if membership is None or not conf.tenant_is_active(tenant):
            # A suspended tenant is refused like a wrong password: login tells strangers
            # nothing about which tenants exist (its members learn it from their tokens).
            raise InvalidCredentialsError()
        token, raw = issue_session_token(membership=membership)
        body = {"accessToken": raw, "accessTokenExpiry": token.expires_at, "tokenType": "Bearer"}
        return Response(TokenOutputSerializer(body).data)


@handles_own_transactions
@accepts_superseded_credentials
@never_replayed("a pure side effect: a replay would fake a logout")
class LogoutApi(ProblemsByDefault, APIView):
    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    @extend_schema(request=None, responses={204: None}, summary="Revoke the presented token.")
    def post(self, request: Request) -> Response:
        header = getattr(request._request, AUTHORIZATION_ATTRIBUTE, None) or request.headers.get(
            "Authorization", ""
        )
        scheme, _, raw = header.partition(" ")
        if scheme.lower() == "bearer" and raw.strip():
            token = AccessToken.objects.filter(digest=digest(raw.strip())).first()
            if token is not None:
                revoke_token(token)
        return Response(status=status.HTTP_204_NO_CONTENT)


MeOutputSerializer = type(
    "MeOutputSerializer",
    (serializers.Serializer,),
    {
        "userId": serializers.IntegerField(),
        "email": serializers.EmailField(),
        TENANT_CODE: serializers.CharField(),
        TENANT_NAME: serializers.CharField(),
        "role": serializers.CharField(),
        ROW_RESTRICTED: serializers.BooleanField(),
        ASSIGNED_ROW_IDS: serializers.ListField(child=serializers.IntegerField()),
    },
)


# The member views read the bearer TenancyMiddleware resolved, whatever the project's
# DEFAULT_AUTHENTICATION_CLASSES say: with DRF's defaults (session, basic) a missing token was
# a 403, and a project authenticator for "Bearer" (JWT) would refuse our tokens outright.
@claims_authorization
@handles_own_transactions
class MeApi(ProblemsByDefault, APIView):
    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantMember]

    @extend_schema(
        responses={200: MeOutputSerializer, **_problems(401)},
        summary=f"Who am I, in which {TENANT_NOUN}.",
    )
    def get(self, request: Request) -> Response:
        actor = request_actor(request)
        tenant = request._request.tenant.instance  # type: ignore[attr-defined]
        scope = request._request.row_scope  # type: ignore[attr-defined]
        body = {
            "userId": actor.user_id,
            "email": actor.email,
            TENANT_CODE: getattr(tenant, conf.get("TENANT_CODE_FIELD")),
            TENANT_NAME: str(getattr(tenant, "name", tenant)),
            "role": actor.role.label,
            ROW_RESTRICTED: not scope.is_unrestricted,
            ASSIGNED_ROW_IDS: sorted(scope.row_ids),
        }
        return Response(MeOutputSerializer(body).data)


class TokenCreateInputSerializer(serializers.Serializer[Any]):
    name = serializers.CharField(max_length=100)
    expiresInDays = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="Lifetime in days; omitted or null → TENANCY_PERSONAL_TOKEN_DEFAULT_DAYS (90).",
    )

    def validate_expiresInDays(self, value: int | None) -> int | None:
        limit = conf.get("PERSONAL_TOKEN_MAX_DAYS")
        if value is not None and value > limit:
            raise serializers.ValidationError(f"Ensure this value is at most {limit}.")
        return value


class TokenSerializer(serializers.ModelSerializer[AccessToken]):
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", allow_null=True)

    class Meta:
        model = AccessToken
        fields = [
            "id",
            "name",
            "kind",
            "prefix",
            "createdAt",
            "expiresAt",
            "lastUsedAt",
            "revokedAt",
        ]


class TokenCreatedSerializer(TokenSerializer):
    token = serializers.CharField()

    class Meta(TokenSerializer.Meta):
        fields = [*TokenSerializer.Meta.fields, "token"]


class TokenListSerializer(serializers.Serializer[Any]):
    items = TokenSerializer(many=True)
    complete = serializers.BooleanField()


@claims_authorization
@handles_own_transactions
@never_replayed("token creation returns the live secret once")
@keys_per_user
class TokenListCreateApi(ProblemsByDefault, APIView):
    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantMember]

    @extend_schema(
        responses={200: TokenListSerializer, **_problems(401)},
        summary="My personal access tokens.",
    )
    def get(self, request: Request) -> Response:
        tokens = list(
            AccessToken.objects.filter(
                membership_id=_membership_id(request), kind=AccessToken.Kind.PERSONAL
            ).order_by("-created_at", "-id")[:501]
        )
        body = {"items": tokens[:500], "complete": len(tokens) <= 500}
        return Response(TokenListSerializer(body).data)

    @extend_schema(
        request=TokenCreateInputSerializer,
        responses={201: TokenCreatedSerializer, **_problems(400, 401, 409)},
        summary=f"Create a personal access token for this {TENANT_NOUN} (shown once).",
    )
    def post(self, request: Request) -> Response:
        data = TokenCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # Every token made here expires: a 15-minute login token must not be able to mint a
        # credential that outlives every password change but one (the epoch still ends it).
        days = data.validated_data.get("expiresInDays") or conf.get("PERSONAL_TOKEN_DEFAULT_DAYS")
        now = timezone.now()
        with transaction.atomic():
            # The row lock serialises concurrent creations, so the cap holds exactly.
            membership = (
                get_membership_model()
                ._default_manager.select_for_update()
                .get(pk=_membership_id(request))
            )
            live = AccessToken.objects.filter(
                membership_id=membership.pk, kind=AccessToken.Kind.PERSONAL, revoked_at__isnull=True
            ).exclude(expires_at__lte=now)
            if live.count() >= conf.get("MAX_PERSONAL_TOKENS"):
                raise TokenLimitReachedError()
            token, raw = issue_token(
                membership=membership,
                name=data.validated_data["name"],
                expires_at=now + timedelta(days=days),
            )
        token.token = raw  # type: ignore[attr-defined]
        return Response(TokenCreatedSerializer(token).data, status=status.HTTP_201_CREATED)


@claims_authorization
@handles_own_transactions
@keys_per_user
class TokenRevokeApi(ProblemsByDefault, APIView):
    authentication_classes = [TenancyAuthentication]
    permission_classes = [IsTenantMember]

    @extend_schema(
        request=None,
        responses={204: None, **_problems(401, 404)},
        summary="Revoke one of my tokens.",
    )
    def delete(self, request: Request, token_id: int) -> Response:
        token = AccessToken.objects.filter(
            pk=token_id, membership_id=_membership_id(request)
        ).first()
        if token is None:
            raise TokenNotFoundError()
        revoke_token(token)
        return Response(status=status.HTTP_204_NO_CONTENT)
