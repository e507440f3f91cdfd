"""Icons on tools, resources, prompts and ``serverInfo`` (MCP 2025-11-25 and 2026-07-28).

Both revisions define the same ``Icon``: ``src`` (an ``https:``/``http:`` URL or a ``data:``
URI), and optionally ``mimeType``, ``sizes`` (``"48x48"``, ``"any"``) and ``theme``
(``"light"``/``"dark"``). Icons are checked when they are declared (decoration time, or the
``MCP_TOOLS_SERVER_ICONS`` setting when the catalogue is built) so a bad one is a start-up error,
never a ``tools/list`` that a client refuses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from django.core.exceptions import ImproperlyConfigured

ICON_KEYS: Final = frozenset({"src", "mimeType", "sizes", "theme"})
ICON_THEMES: Final = ("light", "dark")
# Clients fetch the URL themselves: only schemes a client can be expected to show safely.
ICON_SRC_RE: Final = re.compile(r"^(https?://\S+|data:image/[A-Za-z0-9.+-]+(;[^,\s]*)?,\S+)$")
ICON_SIZE_RE: Final = re.compile(r"^([1-9][0-9]{0,4}x[1-9][0-9]{0,4}|any)$")


def check_icons(
    where: str, icons: Sequence[Mapping[str, Any]] | None
) -> tuple[dict[str, Any], ...]:
    """The icons as wire objects (a copy), or ``()``.

    Raises:
        ImproperlyConfigured: naming ``where`` and what is wrong with which icon.
    """
    if icons is None:
        return ()
    if isinstance(icons, (str, Mapping)) or not isinstance(icons, Sequence):
        raise ImproperlyConfigured(f"{where}: icons is a list of {{'src': ...}} objects")
    checked = []
    for index, icon in enumerate(icons):
        problem = _problem(icon)
        if problem is not None:
            raise ImproperlyConfigured(f"{where}: icons[{index}] {problem}")
        wire: dict[str, Any] = {"src": icon["src"]}
        if icon.get("mimeType") is not None:
            wire["mimeType"] = icon["mimeType"]
        if icon.get("sizes") is not None:
            wire["sizes"] = list(icon["sizes"])
        if icon.get("theme") is not None:
            wire["theme"] = icon["theme"]
        checked.append(wire)
    return tuple(checked)


def _problem(icon: object) -> str | None:
    if not isinstance(icon, Mapping):
        return "must be an object with src (and optionally mimeType, sizes, theme)"
    unknown = set(icon) - ICON_KEYS
    if unknown:
        return f"has unknown keys {sorted(unknown)} (src, mimeType, sizes, theme)"
    src = icon.get("src")
    if not isinstance(src, str) or not ICON_SRC_RE.fullmatch(src):
        return "src must be an http(s) URL or a data:image/… URI"
    mime = icon.get("mimeType")
    if mime is not None and (not isinstance(mime, str) or "/" not in mime):
        return 'mimeType must be a MIME type such as "image/png"'
    sizes = icon.get("sizes")
    if sizes is not None and (
        isinstance(sizes, str)
        or not isinstance(sizes, Sequence)
        or not all(isinstance(s, str) and ICON_SIZE_RE.fullmatch(s) for s in sizes)
    ):
        return 'sizes must be a list of "WxH" or "any"'
    theme = icon.get("theme")
    if theme is not None and theme not in ICON_THEMES:
        return 'theme must be "light" or "dark"'
    return None
