"""Client ID metadata documents: who may make the server fetch one, and how fetches share slots.

A client_id that is an https URL nobody has used yet makes django-oauth-toolkit fetch that URL
and create an ``Application`` from the document (``oauth2_provider.cimd``). That is outbound
I/O and a new row for anyone who can type a URL, so:

- **First sight is budgeted** (``FirstSightBudget``, a ``CIMD_REGISTRATION_PERMISSION_CLASSES``
  entry, asked right before any fetch): per client address (``tenancy.rates.addresses``;
  ``TENANCY_OAUTH_CIMD_FIRST_SIGHT_RATE``) and per document path whatever its query string
  (``…_PER_PATH_RATE``: ``?a=1``, ``?a=2`` … cannot mint rows without bound). Over either,
  ``CIMDFirstSightLimitedError``, which the OAuth views answer with 429 and ``Retry-After``
  (``answers_cimd_limits``). A known client's periodic re-fetch is not first sight.
- **Fetches take slots** (``MetadataFetcher``): at most ``TENANCY_OAUTH_CIMD_FETCHES_PER_ORIGIN``
  in flight per origin and ``…_MAX_CONCURRENT_FETCHES`` in all, per process, waiting at most
  ``…_FETCH_SLOT_WAIT_SECONDS`` for one (and no more waiting than there are slots: a waiter
  holds a request thread). A slow origin then holds its own two slots and no one else's, and
  a new client waits briefly instead of failing at once. (The toolkit's own
  cap is turned off by ``oauth2_provider_settings``: it is shared by every origin and never
  waits.)
- **Unused rows are purged**: ``manage.py purge_cimd_clients`` (``tenancy.oauth.purge``).

The fetch itself is the toolkit's ``SafeMetadataFetcher``: https only, every resolved address
public, the connection pinned to the validated address, no redirects, a 5 s deadline and a
16 KiB cap. The one addition is a test-only path: with
``TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS`` on, an https client_id naming a loopback host is
fetched over plain http from that host, so end-to-end tests can serve a document from a local
server. Off by default; system check ``tenancy_oauth.E001`` refuses it on a public deployment.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any, Final
from urllib.parse import urlsplit

import urllib3
from django_ratelimit.core import get_usage
from django_ratelimit.exceptions import Ratelimited
from oauth2_provider import cimd
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings

from tenancy.events import rate_limited
from tenancy.oauth import conf, limits
from tenancy.process import ProcessObject
from tenancy.rates.addresses import client_address

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
ADDRESS_GROUP: Final = "tenancy_oauth.cimd_first_sight"
PATH_GROUP: Final = "tenancy_oauth.cimd_first_sight_path"

security_logger = logging.getLogger("tenancy.security")


class CIMDFirstSightLimitedError(Ratelimited):
    """Too many client_id URLs seen for the first time, from this address or for this path.

    A ``Ratelimited`` (403 under plain Django); ``answers_cimd_limits`` makes it a 429.
    """

    def __init__(self, *, group: str, retry_after: int) -> None:
        super().__init__("too many new client_id URLs")
        self.group = group
        self.retry_after = max(int(retry_after), 1)


def document_path(client_id: str) -> str:
    """The client_id URL without its query string: the unit of the per-path budget."""
    parts = urlsplit(client_id)
    host = (parts.hostname or "").lower()
    return f"{parts.scheme.lower()}://{host}:{parts.port or 443}{parts.path}"


def _address_key(group: str, request: Any) -> str:
    return client_address(request)


def _path_key(group: str, request: Any) -> str:
    return str(request.cimd_document_path)


class FirstSightBudget:
    """``CIMD_REGISTRATION_PERMISSION_CLASSES`` entry: counts a client_id URL's first sight.

    django-oauth-toolkit asks it right before it would fetch (``resolve_cimd_application``), with
    the oauthlib request, whose ``headers`` are the Django request's ``META``. Always permits;
    over a budget it raises ``CIMDFirstSightLimitedError`` instead, so the refusal can be a 429
    (``limits.too_many``, as every other limit of the authorization server) rather than an
    indistinguishable ``invalid_client``.
    """

    def has_permission(self, request: Any, client_id: str) -> bool:
        if get_application_model().objects.filter(client_id=client_id).exists():
            return True  # a known client's metadata expired: a re-fetch, not first sight
        counted = SimpleNamespace(
            META=getattr(request, "headers", None) or {},
            method=getattr(request, "http_method", "GET"),
            cimd_document_path=document_path(client_id),
        )
        for group, key, rate in (
            (ADDRESS_GROUP, _address_key, conf.get("CIMD_FIRST_SIGHT_RATE")),
            (PATH_GROUP, _path_key, conf.get("CIMD_FIRST_SIGHT_PER_PATH_RATE")),
        ):
            usage = get_usage(counted, group=group, key=key, rate=rate, increment=True)
            if usage is not None and usage["should_limit"]:
                security_logger.info("CIMD first sight refused over %s", group)
                raise CIMDFirstSightLimitedError(group=group, retry_after=usage["time_left"])
        return True


def answers_cimd_limits(view: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate an OAuth view that may resolve a client_id (authorize, token, revoke): a first
    sight over its budget is answered 429 with ``Retry-After``."""

    @functools.wraps(view)
    def wrapped(request: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return view(request, *args, **kwargs)
        except CIMDFirstSightLimitedError as limited:
            rate_limited.send(sender=FirstSightBudget, request=request, group=limited.group)
            return limits.too_many(limited.retry_after)

    return wrapped


class FetchSlots:
    """Fetches in flight in this process, per origin and in all, each taken with a short wait."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._by_origin: dict[str, int] = {}
        self._total = 0
        self._waiting = 0
        self._waiting_by_origin: dict[str, int] = {}

    @contextmanager
    def take(self, origin: str, *, per_origin: int, overall: int, wait: float) -> Iterator[None]:
        """Hold a slot of ``origin`` for the block; ``CIMDError`` after ``wait`` seconds without
        one, or at once when as many fetches already wait as there are slots (the client is
        then unknown, like any failed fetch)."""

        def free() -> bool:
            return self._by_origin.get(origin, 0) < per_origin and self._total < overall

        with self._changed:
            # A waiter holds a request thread: no more of them than there are slots, per origin
            # and in all, or a slow origin's queue would take the threads everyone else needs.
            if not free() and (
                self._waiting_by_origin.get(origin, 0) >= per_origin or self._waiting >= overall
            ):
                raise cimd.CIMDError(f"no fetch slot for {origin}: its queue is full")
            self._waiting += 1
            self._waiting_by_origin[origin] = self._waiting_by_origin.get(origin, 0) + 1
            try:
                if not self._changed.wait_for(free, timeout=wait):
                    raise cimd.CIMDError(f"no fetch slot for {origin} within {wait} s")
            finally:
                self._waiting -= 1
                left = self._waiting_by_origin[origin] - 1
                if left:
                    self._waiting_by_origin[origin] = left
                else:
                    del self._waiting_by_origin[origin]
            self._by_origin[origin] = self._by_origin.get(origin, 0) + 1
            self._total += 1
        try:
            yield
        finally:
            with self._changed:
                left = self._by_origin[origin] - 1
                if left:
                    self._by_origin[origin] = left
                else:
                    del self._by_origin[origin]
                self._total -= 1
                self._changed.notify_all()

    def in_flight(self) -> int:
        with self._changed:
            return self._total

    def waiting(self) -> int:
        with self._changed:
            return self._waiting


# Process state (mcp_tools.operator.process): renewed in place, the object the fetcher holds.
FETCH_SLOTS_STATE: Final = ProcessObject(
    "oauth.fetch_slots", FetchSlots, kind="pool", renew=FetchSlots.__init__
)
FETCH_SLOTS = FETCH_SLOTS_STATE.get()


class MetadataFetcher(cimd.SafeMetadataFetcher):
    """``CIMD_METADATA_FETCHER``: the toolkit's safe fetch, inside a per-origin slot."""

    slots = FETCH_SLOTS

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parsed = cimd._validate_client_id_url(client_id)
        origin = f"{parsed.scheme}://{parsed.hostname}:{parsed.port or 443}"
        started = time.monotonic()
        with self.slots.take(
            origin,
            per_origin=int(conf.get("CIMD_FETCHES_PER_ORIGIN")),
            overall=int(conf.get("CIMD_MAX_CONCURRENT_FETCHES")),
            wait=float(conf.get("CIMD_FETCH_SLOT_WAIT_SECONDS")),
        ):
            if time.monotonic() - started > 0.05:
                security_logger.info("CIMD fetch waited for a slot of %s", origin)
            if conf.get("CIMD_LOOPBACK_HTTP_FOR_TESTS") and parsed.hostname in LOOPBACK_HOSTS:
                return self._fetch_loopback_http(parsed)
            result: tuple[dict[str, Any], int] = super().fetch(client_id)
            return result

    def _fetch_loopback_http(self, parsed: Any) -> tuple[dict[str, Any], int]:
        timeout = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
        pool = urllib3.HTTPConnectionPool(
            host=parsed.hostname,
            port=parsed.port or 80,
            timeout=urllib3.Timeout(connect=timeout, read=timeout, total=timeout),
            retries=False,
            maxsize=1,
        )
        path = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        try:
            response = pool.urlopen(
                "GET",
                path,
                headers={"Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                document: tuple[dict[str, Any], int] = self._read_document(response)
                return document
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
