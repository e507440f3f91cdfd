"""A slow identity provider must cost requests nothing (issue 34, item 2).

The issuer here trickles its answers (``tests.tenancy.external_issuer.trickling_issuer``: the
headers at once, then one byte every few tenths of a second or seconds), which no per-read
timeout ever cuts. ``tenancy.idp.jwks`` fetches in the background, one refresh per issuer, under a
total deadline; requests are answered from the set held (or refused at once without one).
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tenancy.exceptions import SigningKeysUnavailableError
from tenancy.idp import external_jwt, jwks
from tests.factories import FarmFactory, MembershipFactory, bearer_for
from tests.mcp_tools.servers import serve
from tests.mutations import Edit, mutation
from tests.tenancy.external_issuer import (
    LocalIssuer,
    generate_key,
    local_issuer,
    trickling_issuer,
)

DEADLINE = 1.5


@pytest.fixture
def slow(settings: Any) -> Iterator[LocalIssuer]:
    # A byte every 0.3 s: well inside the per-read timeout, forever short of a document.
    with trickling_issuer(0.3) as issuer:
        settings.TENANCY_EXTERNAL_JWT = {
            "ISSUER": issuer.url,
            "JWKS_URI": issuer.jwks_uri,
            "HTTP_TIMEOUT_SECONDS": DEADLINE,
            "JWKS_MIN_REFETCH_SECONDS": 0,
        }
        jwks.forget()
        yield issuer
        jwks.forget()


def _config() -> external_jwt.Settings:
    config = external_jwt.settings()
    assert config is not None
    return config


@mutation(
    "tenancy/idp/jwks.py",
    find="            cached.refresh.start()",
    replace="            cached.refresh.run()",
)
@mutation(
    "tenancy/idp/jwks.py",
    find="    if cached.refresh is not None and cached.refresh.is_alive():",
    replace="    if False:",
)
def test_a_trickling_issuer_never_holds_a_request(slow):
    """Tokens arriving while the issuer trickles are refused at once, and the issuer is asked
    once, however many arrive. Mutation: fetch in the request's thread → each call waits the
    deadline → red; start a refresh while one runs → one request to the issuer per token → red.
    """
    config = _config()

    def ask(n: int) -> float:
        start = time.monotonic()
        with pytest.raises(SigningKeysUnavailableError):
            jwks.key_for(config, f"made-up-{n}")
        return time.monotonic() - start

    with ThreadPoolExecutor(3) as pool:
        waited = list(pool.map(ask, range(6)))
    assert max(waited) < 0.5, waited
    # The refusals come before the refresh's request reaches the issuer: count once it is done.
    jwks.settle(timeout=3 * DEADLINE)
    assert slow.requests["/jwks"] == 1


@mutation("tenancy/idp/jwks.py", find="        self._timer.start()", replace="        pass")
def test_a_trickling_issuer_is_cut_at_the_deadline(slow):
    """The refresh ends at its total deadline although every read gets a byte in time (the
    per-read timeout never trips). Mutation: no deadline watchdog → the refresh is still
    reading long after → red."""
    start = time.monotonic()
    with pytest.raises(SigningKeysUnavailableError):
        jwks.key_for(_config(), None)
    jwks.settle(timeout=3 * DEADLINE)
    assert time.monotonic() - start < DEADLINE + 1.0
    # The held nothing stays nothing: a cut-short body is never taken for a key set.
    with pytest.raises(SigningKeysUnavailableError):
        jwks.key_for(_config(), None)


@mutation(
    Edit(
        "tenancy/idp/jwks.py",
        find="response.read(MAX_DOCUMENT_BYTES + 1)",
        replace="response.read()",
    ),
    Edit(
        "tenancy/idp/jwks.py",
        find="    if len(body) > MAX_DOCUMENT_BYTES:",
        replace="    if False:",
    ),
)
def test_a_key_set_past_the_size_cap_is_not_taken(settings):
    """Mutation: read the whole body and take it → the padded set is used → red."""
    with local_issuer() as issuer:
        issuer.extra = {"padding": "x" * jwks.MAX_DOCUMENT_BYTES}
        settings.TENANCY_EXTERNAL_JWT = {
            "ISSUER": issuer.url,
            "JWKS_URI": issuer.jwks_uri,
            "JWKS_MIN_REFETCH_SECONDS": 3600,
        }
        jwks.forget()
        try:
            with pytest.raises(SigningKeysUnavailableError):
                jwks.key_for(_config(), None)
            jwks.settle()
            with pytest.raises(SigningKeysUnavailableError):
                jwks.key_for(_config(), None)
            assert issuer.requests["/jwks"] == 1
        finally:
            jwks.forget()


# --- the reproduction, on a real server ------------------------------------------------------

LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-11-25",
}


def _timed_lists(
    client: httpx.Client, url: str, bearer: str, count: int, every: float
) -> list[float]:
    """Open loop: ``count`` tools/list calls started ``every`` seconds, however long each takes
    (a stalled server shows in every call started while it stalls, not only the first)."""
    durations: list[float] = []
    lock = threading.Lock()

    def one() -> None:
        start = time.monotonic()
        response = client.post(
            f"{url}/mcp",
            content=json.dumps(LIST),
            headers={**HEADERS, "Authorization": f"Bearer {bearer}"},
            timeout=60,
        )
        assert response.status_code == 200, response.text
        with lock:
            durations.append(time.monotonic() - start)

    threads = []
    for _ in range(count):
        thread = threading.Thread(target=one)
        thread.start()
        threads.append(thread)
        time.sleep(every)
    for thread in threads:
        thread.join()
    return durations


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
@mutation(
    "tenancy/idp/jwks.py",
    find="            cached.refresh.start()",
    replace="            cached.refresh.start()\n            cached.refresh.join()",
)
def test_made_up_kids_against_a_trickling_issuer_do_not_slow_other_callers(settings):
    """Issue 34's reproduction: anonymous JWTs with made-up kids while the issuer sends one
    byte every 3 s; a personal token's tools/list stays under 1.5x its idle p50 (it was 57 s).
    The server has 4 request threads, so waiting JWT requests would exhaust them. Mutation:
    wait for the refresh under the issuer's lock (the old behaviour, with a deadline) → the
    JWT requests hold every request thread for the deadline → red."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    bearer = bearer_for(MembershipFactory(tenant=FarmFactory(), roles=["Manager"]))  # type: ignore[arg-type]
    stranger = generate_key("stranger")
    # The test's own client work shares one GIL with the timed calls: one pooled client (no
    # connection and TLS context per call) and the flood's tokens signed before the clock starts.
    with (
        trickling_issuer(3.0) as slow,
        serve(
            env={
                "CLUCK_EXTERNAL_JWT_ISSUER": slow.url,
                "CLUCK_EXTERNAL_JWT_JWKS_URI": slow.jwks_uri,
                "CLUCK_REQUEST_THREADS": "4",
                "DEBUG": "true",  # a plain-http issuer on loopback (tenancy.E022)
            }
        ) as url,
        httpx.Client(timeout=60) as client,
    ):
        flood_tokens = [
            [slow.token(key=stranger, header={"kid": f"made-up-{n}-{sent}"}) for sent in range(40)]
            for n in range(8)
        ]
        _timed_lists(client, url, bearer, count=5, every=0.05)  # warm: imports, surfaces
        # Idle is measured before and after the flood: the machine's own drift counts on both sides.
        idle_calls = _timed_lists(client, url, bearer, count=20, every=0.15)

        stop = threading.Event()
        refusals: list[int] = []

        def flood(n: int) -> None:
            for token in flood_tokens[n]:
                if stop.is_set():
                    return
                response = client.post(
                    f"{url}/mcp",
                    content=json.dumps(LIST),
                    headers={**HEADERS, "Authorization": f"Bearer {token}"},
                )
                refusals.append(response.status_code)
                stop.wait(0.25)

        flooders = [threading.Thread(target=flood, args=(n,)) for n in range(8)]
        for thread in flooders:
            thread.start()
        try:
            time.sleep(0.5)  # the first made-up kid has started the (trickling) fetch
            loaded = statistics.median(_timed_lists(client, url, bearer, count=20, every=0.15))
        finally:
            stop.set()
            for thread in flooders:
                thread.join()
        idle_calls += _timed_lists(client, url, bearer, count=20, every=0.15)
        idle = statistics.median(idle_calls)
    assert refusals and set(refusals) == {401}
    assert slow.requests["/jwks"] == 1
    assert loaded < 1.5 * idle, (loaded, idle)
