"""A real person's part of the OAuth flow: Debian's Chromium, headless, driven by Playwright.

Playwright never downloads a browser here: it launches ``/usr/bin/chromium`` (``apt-get install
chromium``; ``scripts/test`` installs it on a fresh machine). The authorization server's
redirect to the client's loopback callback is intercepted in the browser and recorded, as the
client's own callback listener would receive it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

# The person who signs in: the demo's sunrise owner (also a Manager of hillside in these tests).
EMAIL = "owner@sunrise.example"
PASSWORD = "cluck-demo-password"
# The servers of the OAuth end-to-end tests may fetch client metadata documents from loopback.
SERVER_ENV = {"CLUCK_OAUTH_CIMD_LOOPBACK_HTTP_FOR_TESTS": "1", "MCP_TOOLS_RATE": "100000/m"}

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_chromium() -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip("Debian's chromium is not installed (scripts/test installs it)")


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield browser
        finally:
            await browser.close()


async def sign_in_and_consent(
    browser: Any,
    authorize_url: str,
    *,
    email: str,
    password: str,
    farm: str | None,
    callback_prefix: str,
    approve: bool = True,
    intercept: bool = True,
    sign_in_pages: list[str] | None = None,
) -> str:
    """Open ``authorize_url``, sign in, pick ``farm`` (a label fragment), approve or deny.

    Returns the callback URL the browser was sent to (with ``code``, ``state``, ``iss``). With
    ``intercept`` the callback is answered in the browser (no listener needed); without it the
    client's own callback server receives it. ``sign_in_pages`` receives the URL of the page
    the person signed in on.
    """
    context = await browser.new_context()
    page = await context.new_page()
    captured: list[str] = []

    async def capture(route: Any) -> None:
        captured.append(route.request.url)
        await route.fulfill(status=200, content_type="text/plain", body="You may close this.")

    if intercept:
        await page.route(lambda url: url.startswith(callback_prefix), capture)
    try:
        await page.goto(authorize_url)
        if sign_in_pages is not None:
            sign_in_pages.append(page.url)
        await page.get_by_label("Email").fill(email)
        await page.get_by_label("Password").fill(password)
        await page.get_by_role("button", name="Sign in").click()
        await page.get_by_role("heading", name=re.compile("^Allow ")).wait_for(timeout=10_000)
        if farm is not None:
            await page.get_by_label(re.compile(re.escape(farm))).check()
        button = "Allow" if approve else "Deny"
        await page.get_by_role("button", name=button, exact=True).click()
        await page.wait_for_url(lambda url: url.startswith(callback_prefix))
        if not intercept:
            captured.append(page.url)
    except Exception as exc:
        text = await page.inner_text("body") if not captured else ""
        raise AssertionError(f"consent flow stuck at {page.url}: {text[:2000]}") from exc
    finally:
        await context.close()
    assert captured, "the browser never reached the client's callback"
    return captured[-1]
