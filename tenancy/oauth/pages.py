"""The authorization server's pages, for a person in a browser: the toolkit's, bound to tenancy.

- ``SignInView``: Django's login view on our template (email and password), only for a project
  without a login of its own (``TENANCY_OAUTH_SIGN_IN = "toolkit"``). By default a signed-out
  user is sent to the project's ``settings.LOGIN_URL`` with ``next``, so its login applies.
- ``ConsentView``: the toolkit's authorization view; the signed-in user sees which client asks
  for what, picks the membership (tenant) the grant is for, and approves or denies.
- ``ClientsView``: the user's authorized clients, each with a revoke button; ``sign_out``.

The endpoints a client calls by itself (metadata, token, revocation, registration) are in
``tenancy.oauth.endpoints``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.mixins import LoginRequiredMixin
from django.contrib.auth.views import LoginView, redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBase, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render, resolve_url
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django.views.generic import TemplateView
from oauth2_provider import views as dot
from oauth2_provider.exceptions import FatalClientError, OAuthToolkitError
from oauth2_provider.forms import AllowForm
from oauth2_provider.http import OAuth2ResponseRedirect
from oauth2_provider.models import get_application_model
from oauth2_provider.views.mixins import OAuthLibMixin
from oauthlib.oauth2.rfc6749.errors import CustomOAuth2Error

from tenancy import conf as tenancy_conf
from tenancy.markers import handles_own_transactions, ignores_ambient_credentials
from tenancy.members import memberships, user_lookup
from tenancy.models import AbstractMembership
from tenancy.oauth import conf, limits
from tenancy.oauth.cimd import answers_cimd_limits
from tenancy.oauth.inputs import UNSAFE_INPUT, unsafe_request
from tenancy.oauth.models import ClientAuthorization
from tenancy.oauth.registration import allowed_schemes
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


def error_page(
    request: HttpRequest, error: str, description: str, *, status: int, retry: int | None = None
) -> HttpResponse:
    """The HTML error page of the sign-in and consent pages (never cached)."""
    response = render(
        request,
        "tenancy_oauth/consent.html",
        {"error": {"error": error, "description": description}},
        status=status,
    )
    add_never_cache_headers(response)
    if retry is not None:
        response["Retry-After"] = str(retry)
    return response


# Every view here authenticates by itself (a client's credentials, or a session it sends to
# conf.login_url() itself), so LoginRequiredMiddleware leaves it alone; marked on each class,
# since what a parent's dispatch was marked with does not survive every decorator stacked here
# (SignInView lost LoginView's mark).
@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(never_cache, name="dispatch")
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

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if unsafe_request(request):
            return error_page(request, "invalid_request", UNSAFE_INPUT, status=400)
        retry = limits.retry_after(request, limits.SIGN_IN)
        if retry is not None:
            description = f"Too many sign-in attempts; try again in {retry} seconds."
            return error_page(request, "too_many_requests", description, status=429, retry=retry)
        response: HttpResponse = super().post(request, *args, **kwargs)
        return response

    def get_default_redirect_url(self) -> str:
        return reverse("oauth2_provider:clients")


@login_not_required
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


@method_decorator(login_not_required, name="dispatch")
@handles_own_transactions
@ignores_ambient_credentials
@method_decorator(answers_cimd_limits, name="dispatch")
@method_decorator(never_cache, name="dispatch")
class ConsentView(dot.AuthorizationView):
    """The authorization endpoint and its consent page.

    An error is redirected to the client only when the browser arrived by the user's own
    action (the consent form's POST) or the signed-in user already authorized this client;
    otherwise it is shown here (RFC 9700 §4.11.2). A self-registered client could else name
    any site as its redirect URI and use this server to send people there with our origin's
    credibility (``scope=nonexistent`` was enough).

    ``prompt=none`` (OpenID Connect Core §3.1.2.1, which OAuth 2.1 clients borrow) never
    shows the page and never issues a code: every grant is bound to the tenant the user picks
    on the page, so there is no "already consented" grant to repeat. Signed out, the answer
    is ``login_required``; signed in, ``consent_required`` — each redirected only to a client
    the user already authorized, shown on a page otherwise.
    """

    template_name = "tenancy_oauth/consent.html"
    form_class = ConsentForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if unsafe_request(request):
            return error_page(request, "invalid_request", UNSAFE_INPUT, status=400)
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)
        return response

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if "none" in request.GET.get("prompt", "").split():
            return self._prompt_none("consent_required")
        response: HttpResponse = super().get(request, *args, **kwargs)
        return response

    def handle_no_permission(self) -> HttpResponse:
        if "none" in self.request.GET.get("prompt", "").split():
            return self._prompt_none("login_required")
        response: HttpResponse = super().handle_no_permission()
        return response

    def _prompt_none(self, error: str) -> HttpResponse:
        try:
            _, credentials = self.validate_authorization_request(self.request)
        except OAuthToolkitError as invalid:
            return self.error_response(invalid, None)
        refusal = OAuthToolkitError(
            error=CustomOAuth2Error(error=error, state=credentials.get("state")),
            redirect_uri=credentials.get("redirect_uri"),
        )
        return self.error_response(refusal, None)

    def _authorized_by_user(self, client_id: str | None) -> bool:
        """The signed-in user approved ``client_id`` before and has not revoked it."""
        user = self.request.user
        if not client_id or not user.is_authenticated:
            return False
        return ClientAuthorization.objects.filter(
            application__client_id=client_id,
            revoked_at__isnull=True,
            **{user_lookup("membership"): user},
        ).exists()

    def error_response(self, error: Any, application: Any, **kwargs: Any) -> HttpResponse:
        redirect, _ = OAuthLibMixin.error_response(self, error, **kwargs)
        automatic = self.request.method != "POST"
        if redirect and automatic and not isinstance(error, FatalClientError):
            oauthlib_error = error.oauthlib_error
            client_id = getattr(oauthlib_error, "client_id", None) or self.request.GET.get(
                "client_id"
            )
            if not self._authorized_by_user(client_id):
                context = {"error": oauthlib_error}
                return self.render_to_response(context, status=400)
        response: HttpResponse = super().error_response(error, application, **kwargs)
        return response

    def redirect(self, redirect_to: str, application: Any) -> HttpResponse:
        if application is None:
            client_id = self.request.GET.get("client_id") or self.request.POST.get("client_id")
            application = get_application_model().objects.filter(client_id=client_id).first()
        if application is None:
            response: HttpResponse = super().redirect(redirect_to, application)
            return response
        return OAuth2ResponseRedirect(redirect_to, allowed_schemes(application))

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


@method_decorator(login_not_required, name="dispatch")
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


@login_not_required
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
