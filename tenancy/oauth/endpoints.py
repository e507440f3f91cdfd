"""The authorization server's endpoints a client calls by itself: django-oauth-toolkit's views,
bound to tenancy.

Metadata (RFC 8414, RFC 9728), token, revocation and registration (RFC 7591, RFC 7592): the
toolkit's views with this server's resource and issuer. They carry
``ignores_ambient_credentials`` (they authenticate clients by their own means, so an ambient
bearer is never read); no tenant is resolved on them, so the Idempotency-Key middleware never
stores or replays them either. Every view here authenticates by itself, so each is marked
``login_not_required`` on its class (see ``tenancy.oauth.pages``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.decorators import method_decorator
from oauth2_provider import views as dot
from oauth2_provider.models import get_application_model
from oauth2_provider.views import dynamic_client_registration as dot_dcr

from tenancy.idp import external_jwt
from tenancy.markers import handles_own_transactions, ignores_ambient_credentials
from tenancy.oauth import conf, limits, registration
from tenancy.oauth.cimd import answers_cimd_limits
from tenancy.oauth.inputs import UNSAFE_INPUT, unsafe_request
from tenancy.oauth.registration import allowed_schemes

# --- metadata -------------------------------------------------------------------------------


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
class AuthorizationServerMetadataView(dot.OAuthServerMetadataView):
    """RFC 8414, with the issuer this server is configured with (or the request's origin)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
class ProtectedResourceMetadataView(dot.OAuthProtectedResourceMetadataView):
    """RFC 9728 for the MCP endpoint, at the path form and at the root form alike."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        suffix = kwargs.get("resource_path")
        if suffix is not None and "/" + suffix.strip("/") != conf.resource_path():
            # Only the one protected resource publishes metadata.
            return JsonResponse({"error": "not_found"}, status=404)
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def get_resource(self, request: HttpRequest) -> str:
        return conf.resource_url(request)

    def get_authorization_servers(self, request: HttpRequest) -> list[str]:
        servers = [conf.issuer_url(request)]
        external = external_jwt.settings()
        if external is not None and external.issuer not in servers:
            servers.append(external.issuer)  # TENANCY_EXTERNAL_JWT: its tokens are taken too
        return servers


# --- token, revocation, registration -------------------------------------------------------


def _refusal(request: HttpRequest, rates: tuple[limits.Limit, ...]) -> HttpResponse | None:
    """The token and revocation endpoints' answer before any work: NUL-free input, under
    ``rates``; ``None`` to go on."""
    if unsafe_request(request):
        return limits.oauth_error("invalid_request", UNSAFE_INPUT)
    retry = limits.retry_after(request, rates)
    return None if retry is None else limits.too_many(retry)


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
class TokenView(dot.TokenView):
    """The token endpoint: NUL-free input, under both rates, then the server decides."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = _refusal(request, limits.TOKEN)
        if refused is not None:
            return refused
        # Always through the server: the toolkit's own post() answers a device-code request
        # itself, with database work, for a grant this server does not have.
        response: HttpResponse = self.authorization_flow_token_response(request)
        return response


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
class RevokeTokenView(dot.RevokeTokenView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = _refusal(request, limits.REVOCATION)
        if refused is not None:
            return refused
        response: HttpResponse = super().post(request, *args, **kwargs)
        return response


def _registration_refusal(request: HttpRequest) -> HttpResponse | dict[str, Any]:
    parsed = registration.parse(request)
    if isinstance(parsed, registration.Refusal):
        return limits.oauth_error(parsed.error, parsed.description, status=parsed.status)
    return parsed


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
class RegistrationView(dot.DynamicClientRegistrationView):
    """RFC 7591 registration, bounded (``tenancy.oauth.registration``) and rate-limited.

    The toolkit's view, except that a public client (``token_endpoint_auth_method: none``)
    gets no secret: the toolkit generated and hashed one anyway (~0.4 s of CPU per anonymous
    request with the default hasher) that nobody would ever present.
    """

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        data = _registration_refusal(request)
        if isinstance(data, HttpResponse):
            return data
        retry = limits.retry_after(request, limits.REGISTRATION)
        if retry is not None:
            return limits.too_many(retry)
        if not dot_dcr._check_permissions(request):
            return dot_dcr._error_response(
                "access_denied", "Authentication required to register a client", status=401
            )
        app_kwargs, error = dot_dcr._build_application_kwargs(data)
        if error:
            return error
        application_model = get_application_model()
        user = request.user if request.user.is_authenticated else None
        application = application_model(
            user=user, registration_source=application_model.RegistrationSource.DCR, **app_kwargs
        )
        raw_secret = None
        if application.client_type == application_model.CLIENT_PUBLIC:
            application.client_secret = ""
            application.hash_client_secret = False
        else:
            raw_secret = application.client_secret  # before save() hashes it
        # The toolkit validates redirect schemes against its settings; a private-use scheme
        # passed registration.refusal above, so this client's own are allowed too.
        setattr(application, "get_allowed_schemes", lambda: allowed_schemes(application))  # noqa: B010
        try:
            application.full_clean()
        except ValidationError as exc:
            return dot_dcr._error_response(
                "invalid_client_metadata", dot_dcr._validation_error_description(exc)
            )
        with transaction.atomic():
            application.save()
            raw_token = dot_dcr._issue_registration_token(application, user)
        body = dot_dcr._application_to_response(application, raw_token, request)
        if raw_secret:
            body["client_secret"] = raw_secret
        return JsonResponse(body, status=201)


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
class RegistrationManagementView(dot.DynamicClientRegistrationManagementView):
    """RFC 7592 read, update and delete, with registration's bounds on an update."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        data = _registration_refusal(request)
        if isinstance(data, HttpResponse):
            return data
        auth = self._authenticate_registration_request(request, client_id)
        if isinstance(auth, HttpResponse):
            return auth
        wanted = data.get("token_endpoint_auth_method", "client_secret_basic")
        # A public client has no secret: it cannot become confidential (nor the reverse) by an
        # update; it registers anew.
        if (wanted == "none") != (auth.application.client_type == "public"):
            return limits.oauth_error(
                "invalid_client_metadata", "token_endpoint_auth_method cannot change"
            )
        response: HttpResponse = super().put(request, client_id, *args, **kwargs)
        return response
