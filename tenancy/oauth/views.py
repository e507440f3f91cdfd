"""The authorization server's views, by the name they had before the split (``tenancy.oauth.urls``
and projects import them from here): the pages a person sees are in ``tenancy.oauth.pages``, the
endpoints a client calls in ``tenancy.oauth.endpoints``.
"""

from tenancy.oauth.endpoints import (
    AuthorizationServerMetadataView,
    ProtectedResourceMetadataView,
    RegistrationManagementView,
    RegistrationView,
    RevokeTokenView,
    TokenView,
)
from tenancy.oauth.pages import (
    ClientsView,
    ConsentForm,
    ConsentView,
    EmailAuthenticationForm,
    SignInView,
    error_page,
    live_memberships,
    membership_label,
    revoke_client,
    sign_out,
)
from tenancy.oauth.registration import allowed_schemes

__all__ = [
    "AuthorizationServerMetadataView",
    "ClientsView",
    "ConsentForm",
    "ConsentView",
    "EmailAuthenticationForm",
    "ProtectedResourceMetadataView",
    "RegistrationManagementView",
    "RegistrationView",
    "RevokeTokenView",
    "SignInView",
    "TokenView",
    "allowed_schemes",
    "error_page",
    "live_memberships",
    "membership_label",
    "revoke_client",
    "sign_out",
]
