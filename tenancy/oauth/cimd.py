"""Fetching client ID metadata documents (``CIMD_METADATA_FETCHER``).

The toolkit's ``SafeMetadataFetcher`` does the real work: https only, every resolved address
public, the connection pinned to the validated address, no redirects, a 5 s deadline and a
16 KiB cap. The one addition is a test-only path: with
``TENANCY_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS`` on, an https client_id naming a loopback host is
fetched over plain http from that host, so end-to-end tests can serve a document from a local
server. Off by default; system check ``tenancy_oauth.E001`` refuses it on a public deployment.
"""

from __future__ import annotations

from typing import Any

import urllib3
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from tenancy.oauth import conf

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


class MetadataFetcher(cimd.SafeMetadataFetcher):
    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parsed = cimd._validate_client_id_url(client_id)
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
