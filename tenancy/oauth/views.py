"""The authorization server's pages and endpoints: django-oauth-toolkit's views, bound to tenancy.

- ``SignInView``: Django's login view on our template (email and password), only for a project
  without a login of its own (``TENANCY_OAUTH_SIGN_IN = "toolkit"``). By default a signed-out
  user is sent to the project's ``settings.LOGIN_URL`` with ``next``, so its login applies.
- ``ConsentView``: the toolkit's authorization view; the signed-in user sees which client asks
  for what, picks the membership (tenant) the grant is for, and approves or denies.
- ``ClientsView``: the user's authorized clients, each with a revoke button.
- Metadata (RFC 8414, RFC 9728), token, revocation and registration: the toolkit's views with
  this server's resource and issuer. They carry ``ignores_ambient_credentials`` (they
  authenticate clients by their own means, so an ambient bearer is never read); no tenant is
  resolved on them, so the Idempotency-Key middleware never stores or replays them either.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib.auth import logout
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import LoginView, redirect_to_login
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, resolve_url
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django.views.generic import TemplateView
from django_ratelimit.decorators import ratelimit
from oauth2_provider import views as dot
from oauth2_provider.exceptions import OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.models import get_application_model
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from tenancy import conf as tenancy_conf
from tenancy.addresses import rate_key
from tenancy.markers import handles_own_transactions, ignores_ambient_credentials
from tenancy.members import memberships, user_lookup
from tenancy.models import AbstractMembership
from tenancy.oauth import conf
from tenancy.oauth.cimd import answers_cimd_limits
from tenancy.oauth.models import ClientAuthorization
from tenancy.oauth.services import authorization_revoke, live_authorizations
from tenancy.oauth.validators import MEMBERSHIP_CREDENTIAL


def _noun() -> str:
    return str(tenancy_conf.get("TENANT_NOUN"))


def live_memberships(user: Any) -> list[AbstractMembership]:
    """The user's memberships a grant may be for: enabled, in an active tenant."""
    queryset = memberships(user=user, live=True)
    tenant_field = queryset.model.TENANT_FIELD
    return [
        membership
        for membership in queryset.select_related(tenant_field).order_by(f"{tenant_field}__pk")
        if tenancy_conf.tenant_is_active(membership.get_tenant())
    ]


def membership_label(membership: AbstractMembership) -> str:
    tenant = membership.get_tenant()
    name = str(getattr(tenant, "name", tenant))
    return f"{name} — {membership.effective_role.label}"


class EmailAuthenticationForm(AuthenticationForm):
    username = forms.EmailField(
        label="Email",
        max_length=254,
        widget=forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True}),
    )


@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(never_cache, name="dispatch")
@method_decorator(
    ratelimit(key=rate_key, rate=lambda group, request: tenancy_conf.get("LOGIN_RATE"), block=True),
    name="post",
)
class SignInView(LoginView):
    template_name = "tenancy_oauth/sign_in.html"
    authentication_form = EmailAuthenticationForm
    redirect_authenticated_user = True

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        # A password-only page beside the project's login would bypass its MFA or SSO for the
        # whole site (the session is the project's): it exists only when asked for.
        if not conf.uses_own_sign_in():
            raise Http404("The project's own login signs people in (TENANCY_OAUTH_SIGN_IN).")
        return super().dispatch(request, *args, **kwargs)

    def get_default_redirect_url(self) -> str:
        return reverse("oauth2_provider:clients")


@handles_own_transactions
@ignores_ambient_credentials
@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    logout(request)
    return HttpResponseRedirect(resolve_url(conf.login_url()))


class ConsentForm(AllowForm):
    membership = forms.TypedChoiceField(
        coerce=int, required=False, widget=forms.RadioSelect, label="Which one?"
    )

    def __init__(
        self, *args: Any, memberships: Sequence[AbstractMembership] = (), **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["membership"]
        assert isinstance(field, forms.TypedChoiceField)
        field.choices = [(m.pk, membership_label(m)) for m in memberships]
        if len(memberships) == 1:
            field.initial = memberships[0].pk

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("allow") and not data.get("membership"):
            self.add_error("membership", f"Choose the {_noun()} this access is for.")
        return data


def _invalid_target(resource: str, credentials: dict[str, Any]) -> OAuthToolkitError:
    return OAuthToolkitError(
        error=CustomOAuth2Error(
            error="invalid_target",
            description=f"This server grants access only to its own resource, not {resource!r}.",
            state=credentials.get("state"),
        ),
        redirect_uri=credentials.get("redirect_uri"),
    )


@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
class ConsentView(dot.AuthorizationView):
    template_name = "tenancy_oauth/consent.html"
    form_class = ConsentForm

    def get_login_url(self) -> str:
        # Every signed-out path of django-oauth-toolkit's view (plain, prompt=login) asks here.
        return conf.login_url()

    def _memberships(self) -> list[AbstractMembership]:
        if not hasattr(self, "_membership_cache"):
            self._membership_cache = live_memberships(self.request.user)
        return self._membership_cache

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = super().get_form_kwargs()
        kwargs["memberships"] = self._memberships()
        return kwargs

    def validate_authorization_request(self, request: HttpRequest) -> Any:
        scopes, credentials = super().validate_authorization_request(request)
        # RFC 8707: this server issues tokens for one resource only (its MCP endpoint).
        canonical = conf.resource_url(request)
        for resource in request.GET.getlist("resource"):
            if resource.rstrip("/") != canonical:
                raise _invalid_target(resource, credentials)
        return scopes, credentials

    def create_authorization_response(
        self, request: HttpRequest, scopes: str, credentials: dict[str, Any], allow: bool
    ) -> Any:
        canonical = conf.resource_url(request)
        for resource in credentials.get("resource") or []:
            if resource.rstrip("/") != canonical:
                raise _invalid_target(resource, credentials)
        # Every grant is bound to the canonical resource, requested or not.
        credentials["resource"] = [canonical]
        credentials[MEMBERSHIP_CREDENTIAL] = getattr(self, "_chosen_membership", None)
        return super().create_authorization_response(request, scopes, credentials, allow)

    def form_valid(self, form: Any) -> HttpResponse:
        self._chosen_membership = form.cleaned_data.get("membership")
        response: HttpResponse = super().form_valid(form)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        application = context.get("application")
        if application is None and "form" in context:
            client_id = context["form"].data.get("client_id") or context["form"].initial.get(
                "client_id"
            )
            application = get_application_model().objects.filter(client_id=client_id).first()
            context["application"] = application
        if application is not None:
            source = getattr(application, "registration_source", "")
            context["client_kind"] = {
                "cimd": "identified by its published metadata document",
                "dcr": "registered itself automatically; its name is not verified",
            }.get(str(source), "registered by this server's operator")
        scopes = (context["form"].initial.get("scope") or "").split() if "form" in context else []
        all_scopes = conf._provider("SCOPES")
        context["scope_items"] = [(scope, all_scopes.get(scope, scope)) for scope in scopes]
        context["memberships"] = self._memberships()
        context["tenant_noun"] = _noun()
        return context


@handles_own_transactions
@ignores_ambient_credentials
class ClientsView(LoginRequiredMixin, TemplateView):
    """The signed-in user's authorized clients, in every membership, with a revoke button."""

    template_name = "tenancy_oauth/clients.html"

    def get_login_url(self) -> str:
        return conf.login_url()

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context["authorizations"] = list(
            live_authorizations(**{user_lookup("membership"): self.request.user})[:200]
        )
        context["tenant_noun"] = _noun()
        return context


@handles_own_transactions
@ignores_ambient_credentials
@require_POST
def revoke_client(request: HttpRequest, authorization_id: int) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("oauth2_provider:clients"), conf.login_url())
    authorization = get_object_or_404(
        ClientAuthorization,
        pk=authorization_id,
        **{user_lookup("membership"): request.user},
    )
    authorization_revoke(authorization=authorization)
    return HttpResponseRedirect(reverse("oauth2_provider:clients"))


# --- metadata -------------------------------------------------------------------------------


@handles_own_transactions
@ignores_ambient_credentials
class AuthorizationServerMetadataView(dot.OAuthServerMetadataView):
    """RFC 8414, with the issuer this server is configured with (or the request's origin)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response


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
        return [conf.issuer_url(request)]


# --- token, revocation, registration -------------------------------------------------------


@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
class TokenView(dot.TokenView):
    pass


@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
class RevokeTokenView(dot.RevokeTokenView):
    pass


@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(
    ratelimit(key=rate_key, rate=lambda group, request: conf.get("REGISTRATION_RATE"), block=True),
    name="post",
)
class RegistrationView(dot.DynamicClientRegistrationView):
    pass


@handles_own_transactions
@ignores_ambient_credentials
class RegistrationManagementView(dot.DynamicClientRegistrationManagementView):
    pass
