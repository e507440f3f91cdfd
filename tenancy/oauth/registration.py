"""What an anonymous dynamic client registration (RFC 7591) may ask for, checked before any work.

Registration is open (hosted assistants register themselves), so what it costs is bounded
here: the document's size, how many redirect URIs it lists and how long each is, the name,
every other string and list; nothing it asks for that this server would never honour is
accepted (``grant_types`` beyond the code grant and its refresh, ``response_types`` beyond
``code``). Redirect URIs are https, plain http only back to this machine (RFC 8252 §7.3), or a
native app's private-use scheme (RFC 8252 §7.1: a reverse domain name, so it holds a dot).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.http import HttpRequest
from oauth2_provider.settings import oauth2_settings

from tenancy.oauth import conf
from tenancy.oauth.inputs import unsafe_value
from tenancy.oauth.server import GRANT_TYPES, RESPONSE_TYPES
from tenancy.oauth.validators import LOOPBACK_HOSTS

# Lists other than redirect_uris (contacts, grant_types, …) hold at most this many items.
MAX_LIST_ITEMS = 10
# RFC 3986 scheme syntax; a private-use one is a reverse domain name (com.example.app).
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*\Z")
# Schemes no redirect URI may use, whatever their syntax: they run, read or name local things.
_REFUSED_SCHEMES = frozenset({"javascript", "data", "file", "blob", "about", "vbscript"})


@dataclass(frozen=True)
class Refusal:
    error: str  # an RFC 7591 §3.2.2 (or RFC 6749) error code
    description: str
    status: int = 400


def private_use_scheme(scheme: str) -> bool:
    """A native app's reverse-domain scheme (RFC 8252 §7.1), e.g. ``com.example.app``."""
    return "." in scheme and bool(_SCHEME.match(scheme)) and scheme not in _REFUSED_SCHEMES


def redirect_uri_refusal(uri: str) -> str | None:
    """Why ``uri`` cannot be a registered redirect URI (``None``: it can)."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return "is not a URI"
    scheme = parts.scheme.lower()
    if parts.fragment or "#" in uri:
        return "has a fragment"
    if scheme == "https":
        return None if parts.hostname else "names no host"
    if scheme == "http":
        # RFC 8252 §7.3 / RFC 9700 §2.1: plain http only back to this machine.
        return None if parts.hostname in LOOPBACK_HOSTS else "is http to a host other than loopback"
    if private_use_scheme(scheme):
        # RFC 8252 §7.1: com.example.app:/path; no authority (that would be another host).
        return None if not parts.netloc else "names a host after a private-use scheme"
    return "uses a scheme that is neither https, loopback http nor a reverse-domain one"


def _strings_and_lists_refusal(data: dict[str, Any]) -> str | None:
    max_length = int(conf.get("REGISTRATION_MAX_URI_LENGTH"))
    for key, value in data.items():
        values = value if isinstance(value, list) else [value]
        if isinstance(value, list) and key != "redirect_uris" and len(value) > MAX_LIST_ITEMS:
            return f"{key} lists more than {MAX_LIST_ITEMS} items"
        for item in values:
            if isinstance(item, str) and len(item) > max_length:
                return f"{key} holds a value longer than {max_length} characters"
            if isinstance(item, dict | list):
                return f"{key} nests values this server does not read"
    return None


def refusal(data: dict[str, Any]) -> Refusal | None:
    """Why the registration document ``data`` is refused (``None``: it may go on)."""
    if unsafe_value(data):
        return Refusal("invalid_request", "The document holds NUL or unpaired surrogates.")
    problem = _strings_and_lists_refusal(data)
    if problem:
        return Refusal("invalid_client_metadata", problem)
    name = data.get("client_name", "")
    max_name = int(conf.get("REGISTRATION_MAX_NAME_LENGTH"))
    if not isinstance(name, str) or len(name) > max_name:
        return Refusal(
            "invalid_client_metadata", f"client_name must be text of at most {max_name} characters"
        )
    grant_types = data.get("grant_types", ["authorization_code"])
    if isinstance(grant_types, list) and not set(grant_types) <= set(GRANT_TYPES):
        offered = ", ".join(GRANT_TYPES)
        return Refusal("invalid_client_metadata", f"grant_types may only hold {offered}")
    response_types = data.get("response_types", ["code"])
    if not isinstance(response_types, list) or not set(response_types) <= set(RESPONSE_TYPES):
        return Refusal("invalid_client_metadata", "response_types may only hold code")
    uris = data.get("redirect_uris", [])
    if not isinstance(uris, list):
        return None  # the toolkit words this one
    max_uris = int(conf.get("REGISTRATION_MAX_REDIRECT_URIS"))
    if len(uris) > max_uris:
        return Refusal("invalid_redirect_uri", f"At most {max_uris} redirect_uris.")
    for uri in uris:
        why = redirect_uri_refusal(uri) if isinstance(uri, str) else "is not a string"
        if why:
            return Refusal("invalid_redirect_uri", f"The redirect URI {uri!r:.200} {why}.")
    return None


def parse(request: HttpRequest) -> dict[str, Any] | Refusal:
    """The registration document of ``request``, or why it is refused, before any DB work."""
    limit = int(conf.get("REGISTRATION_MAX_BYTES"))
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit or len(request.body) > limit:
        return Refusal("invalid_client_metadata", f"At most {limit} bytes.", status=413)
    try:
        data = json.loads(request.body)
    except ValueError:  # JSONDecodeError, and bytes that are not UTF-8
        return Refusal("invalid_client_metadata", "Request body must be valid JSON")
    if not isinstance(data, dict):
        return Refusal("invalid_client_metadata", "Request body must be a JSON object")
    return refusal(data) or data


def allowed_schemes(application: Any) -> list[str]:
    """The toolkit's redirect schemes plus the private-use ones this client registered
    (RFC 8252 §7.1), which only the registration endpoint admits (``refusal`` above)."""
    schemes = list(oauth2_settings.ALLOWED_REDIRECT_URI_SCHEMES)
    for uri in str(getattr(application, "redirect_uris", "") or "").split():
        scheme = uri.split(":", 1)[0].lower()
        if private_use_scheme(scheme) and scheme not in schemes:
            schemes.append(scheme)
    return schemes
