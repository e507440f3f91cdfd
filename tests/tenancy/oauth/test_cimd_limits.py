"""Client ID metadata documents cost a budget: first sight per address and per document path,
fetch slots per origin with a short wait, and the purge of rows nobody used.

Documents come from local servers (``TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS``) that answer
any path with a valid document naming that very URL, after an optional delay.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlencode

import pytest
from django.core.management import call_command
from django.db import connections
from django.test import Client
from django.utils import timezone
from oauth2_provider.models import Grant, get_application_model

from tenancy.oauth import cimd
from tenancy.oauth.models import ClientAuthorization
from tests.factories import MembershipFactory
from tests.mutations import mutation

Application = get_application_model()


@dataclass
class DocumentServer:
    origin: str
    delay: float = 0.0
    hits: int = 0

    def url(self, path: str) -> str:
        return f"{self.origin}{path}"


def _document_server(delay: float = 0.0) -> Iterator[DocumentServer]:
    server = DocumentServer(origin="", delay=delay)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            server.hits += 1
            time.sleep(server.delay)
            body = json.dumps(
                {
                    "client_id": server.origin + self.path,
                    "client_name": "probe",
                    "redirect_uris": ["http://localhost/callback"],
                    "token_endpoint_auth_method": "none",
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    server.origin = f"https://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def documents(settings: Any) -> Iterator[DocumentServer]:
    settings.TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS = True
    yield from _document_server()


def token_request(client_id: str, address: str = "198.51.100.7") -> Any:
    """An anonymous code exchange naming ``client_id``: enough to make the server resolve it."""
    data = {
        "grant_type": "authorization_code",
        "code": "not-a-code",
        "redirect_uri": "http://localhost/callback",
        "client_id": client_id,
        "code_verifier": "v" * 43,
    }
    return Client(REMOTE_ADDR=address).post(
        "/oauth/token/", urlencode(data), content_type="application/x-www-form-urlencoded"
    )


def _token_request_in_thread(client_id: str, address: str) -> Any:
    try:
        return token_request(client_id, address)
    finally:
        connections.close_all()


def _known(url: str) -> bool:
    return Application.objects.filter(client_id=url).exists()


@mutation(
    "tenancy/oauth/defaults.py",
    find='        "CIMD_REGISTRATION_PERMISSION_CLASSES": '
    '("tenancy.oauth.cimd.FirstSightBudget",),\n',
    replace="",
)
@pytest.mark.django_db
def test_first_sight_over_the_address_budget_is_429_with_retry_after_before_any_fetch(
    documents: DocumentServer, settings: Any
) -> None:
    """Mutation: drop ``FirstSightBudget`` from the defaults → red (every URL is fetched)."""
    settings.TENANCY_OAUTH_CIMD_FIRST_SIGHT_RATE = "3/h"
    for n in range(3):
        response = token_request(documents.url(f"/client-{n}.json"))
        assert response.status_code == 400, response.content  # resolved; the code is junk
        assert _known(documents.url(f"/client-{n}.json"))
    refused = token_request(documents.url("/client-3.json"))
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 3600
    assert refused.json()["error"] == "temporarily_unavailable"
    assert not _known(documents.url("/client-3.json"))
    # A client already known is not seen for the first time; another address has its own budget.
    assert token_request(documents.url("/client-0.json")).status_code == 400
    assert token_request(documents.url("/client-3.json"), address="203.0.113.9").status_code == 400


@mutation(
    "tenancy/oauth/cimd.py",
    find='    return f"{parts.scheme.lower()}://{host}:{parts.port or 443}{parts.path}"',
    replace='    return f"{parts.scheme.lower()}://{host}:{parts.port or 443}'
    '{parts.path}?{parts.query}"',
)
@pytest.mark.django_db
def test_query_string_variants_of_one_document_share_one_budget_whoever_asks(
    documents: DocumentServer, settings: Any
) -> None:
    """Mutation: key the path budget on the query string too → red (a row per variant)."""
    settings.TENANCY_OAUTH_CIMD_FIRST_SIGHT_PER_PATH_RATE = "2/h"
    answers = [
        token_request(documents.url(f"/client.json?v={n}"), address=f"198.51.100.{n + 1}")
        for n in range(5)
    ]
    assert [a.status_code for a in answers] == [400, 400, 429, 429, 429]
    assert (
        Application.objects.filter(client_id__startswith=documents.url("/client.json")).count() == 2
    )
    # Another document path of the same origin is a budget of its own.
    assert token_request(documents.url("/other.json?v=9")).status_code == 400


@mutation(
    "tenancy/oauth/cimd.py",
    find='        origin = f"{parsed.scheme}://{parsed.hostname}:{parsed.port or 443}"',
    replace='        origin = "every origin"',
)
@mutation(
    "tenancy/oauth/defaults.py",
    find='        "CIMD_MAX_CONCURRENT_FETCHES": 0,',
    replace='        "CIMD_MAX_CONCURRENT_FETCHES": 10,',
)
@pytest.mark.postgres  # threads at once: SQLite in memory locks the table
@pytest.mark.django_db(transaction=True)
def test_slow_origins_cannot_starve_a_new_client_of_another(
    documents: DocumentServer, settings: Any
) -> None:
    """Four parallel first sights of slow documents on each of three origins, then a new
    client elsewhere. Before: twelve such requests filled the toolkit's ten shared slots,
    never waited for, and the new client was ``invalid_client`` in 10 ms. Now each slow origin
    holds its two slots (two more wait, the rest are turned away at once) and the new client
    is served. Mutations: one slot pool for every origin → red; the toolkit's own cap back on
    (10, never waiting, taken before ours) → red."""
    settings.TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS = True
    settings.TENANCY_OAUTH_CIMD_FIRST_SIGHT_RATE = "100/h"
    settings.TENANCY_OAUTH_CIMD_FIRST_SIGHT_PER_PATH_RATE = "100/h"
    settings.TENANCY_OAUTH_CIMD_FETCH_SLOT_WAIT_SECONDS = 1.0
    with ExitStack() as stack, ThreadPoolExecutor(12) as pool:
        slow = [stack.enter_context(contextmanager(_document_server)(1.5)) for _ in range(3)]
        requests = [
            pool.submit(_token_request_in_thread, origin.url(f"/slow-{n}.json"), f"198.51.100.{n}")
            for n in range(4)
            for origin in slow
        ]
        deadline = time.monotonic() + 5
        while sum(origin.hits for origin in slow) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.3)  # the others queue or are turned away meanwhile
        legit = documents.url("/claude-like-client.json")
        assert token_request(legit, address="203.0.113.50").status_code == 400
        assert _known(legit)
        outcomes = [future.result().status_code for future in requests]
    # Each slow origin had its two slots; its waiters waited a second and were turned away.
    assert 2 <= outcomes.count(400) <= 12
    assert Application.objects.filter(client_id__contains="/slow-").count() <= 12


@mutation(
    "tenancy/oauth/cimd.py",
    find="            if not free() and (",
    replace="            if False and (",
)
def test_waiting_for_a_slot_is_bounded_per_origin() -> None:
    """A waiter holds a request thread: as many may wait as there are slots, the next fails
    at once instead of taking another thread for the whole wait. Mutation: no bound on the
    queue → red."""
    slots = cimd.FetchSlots()
    limits = {"per_origin": 1, "overall": 4}
    release = threading.Event()

    def hold(wait: float) -> None:
        with slots.take("https://slow", **limits, wait=wait):
            release.wait(5)

    holder = threading.Thread(target=hold, args=(0,))
    holder.start()
    while slots.in_flight() == 0:
        time.sleep(0.001)
    waiter = threading.Thread(target=hold, args=(2,))
    waiter.start()
    while slots.waiting() == 0:
        time.sleep(0.001)
    started = time.monotonic()
    with pytest.raises(cimd.cimd.CIMDError, match="queue is full"):
        with slots.take("https://slow", **limits, wait=2):
            pass
    assert time.monotonic() - started < 0.5
    with slots.take("https://other", **limits, wait=0):  # another origin is not held up
        pass
    release.set()
    holder.join()
    waiter.join()
    assert slots.in_flight() == 0 and slots.waiting() == 0


@mutation(
    "tenancy/oauth/cimd.py",
    find="                if not self._changed.wait_for(free, timeout=wait):",
    replace="                if not free():",
)
def test_a_fetch_waits_briefly_for_a_slot_instead_of_failing_at_once() -> None:
    """Mutation: take slots without waiting (the toolkit's behaviour) → red."""
    slots = cimd.FetchSlots()
    limits = {"per_origin": 1, "overall": 1}
    release = threading.Event()

    def hold() -> None:
        with slots.take("https://a", **limits, wait=0):
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    while slots.in_flight() == 0:
        time.sleep(0.001)
    threading.Timer(0.2, release.set).start()
    started = time.monotonic()
    with slots.take("https://b", **limits, wait=2):
        waited = time.monotonic() - started
    holder.join()
    assert 0.1 < waited < 2
    with slots.take("https://a", **limits, wait=0), pytest.raises(cimd.cimd.CIMDError):
        with slots.take("https://a", **limits, wait=0.05):
            pass
    assert slots.in_flight() == 0


def _cimd_application(url: str, *, age_hours: float) -> Any:
    application = Application.objects.create(
        client_id=url,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://localhost/callback",
        registration_source=Application.RegistrationSource.CIMD,
        name="probe",
    )
    created = timezone.now() - dt.timedelta(hours=age_hours)
    Application.objects.filter(pk=application.pk).update(created=created)
    return application


@mutation(
    "tenancy/oauth/purge.py",
    find="        ClientAuthorization,\n    ):",
    replace="    ):",
)
@mutation(
    "tenancy/oauth/purge.py",
    find="        registration_source=Application.RegistrationSource.CIMD, created__lt=cutoff",
    replace="        created__lt=cutoff",
)
@pytest.mark.django_db
def test_purge_cimd_clients_deletes_only_old_cimd_applications_nothing_used() -> None:
    """Mutations: forget approvals as a use → red; forget the CIMD condition → red (the
    operator's own application goes)."""
    probe = _cimd_application("https://probe.example/a.json", age_hours=30)
    recent = _cimd_application("https://probe.example/b.json", age_hours=1)
    granted = _cimd_application("https://client.example/c.json", age_hours=30)
    approved = _cimd_application("https://client.example/d.json", age_hours=30)
    manual = Application.objects.create(
        client_id="manual-client",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://localhost/callback",
        name="operator's",
    )
    Application.objects.filter(pk=manual.pk).update(created=timezone.now() - dt.timedelta(days=9))
    membership: Any = MembershipFactory()
    Grant.objects.create(
        application=granted,
        user=membership.user,
        code="c",
        expires=timezone.now(),
        redirect_uri="http://localhost/callback",
    )
    ClientAuthorization.objects.create(
        membership=membership,
        application=approved,
        credential_epoch=0,
        scope="mcp:read",
        resource="",
        code_digest="d" * 64,
    )
    call_command("purge_cimd_clients", verbosity=0)
    remaining = set(Application.objects.values_list("pk", flat=True))
    assert probe.pk not in remaining
    assert {recent.pk, granted.pk, approved.pk, manual.pk} <= remaining
    call_command("purge_cimd_clients", "--hours", "0", verbosity=0)
    assert not Application.objects.filter(pk=recent.pk).exists()
