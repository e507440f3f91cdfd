"""What the docs claim about the code, held to the code (issue 33).

Every system check id the reusable apps register is listed where the docs list check ids, so
a new check (tests/shop/test_setup_mistakes.py has one per setup mistake) cannot ship
undocumented. The figures of a bare install and the Node versions are held in
tests/packaging/test_bare_install.py, which measures them.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.mutations import mutation

ROOT = Path(__file__).resolve().parents[1]
APPS = ("tenancy", "idempotency", "mcp_tools", "a2a_tools")
_APP = "|".join(APPS)
_ID = re.compile(rf"""["']((?:{_APP})\.[EW]\d{{3}})["']""")
_FULL = re.compile(rf"`({_APP})\.([EW]\d{{3}})`")
_SHORT = re.compile(r"`([EW]\d{3})`(?:–`([EW]\d{3})`)?")


def registered_ids() -> set[str]:
    """The check ids the apps' code names (``id="tenancy.E003"``), tests aside."""
    found: set[str] = set()
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            if "tests" not in path.parts and "migrations" not in path.parts:
                found.update(_ID.findall(path.read_text()))
    return found


def documented_ids() -> set[str]:
    """The ids docs/*.md name: in full (`mcp_tools.E006`), or short (`E007`, `E010`–`E012`)
    after a full one of the same app in the same paragraph."""
    found: set[str] = set()
    for doc in (ROOT / "docs").glob("*.md"):
        for paragraph in doc.read_text().split("\n\n"):
            app = None
            position = 0
            while True:
                full = _FULL.search(paragraph, position)
                short = _SHORT.search(paragraph, position)
                if full is None and short is None:
                    break
                if full is not None and (short is None or full.start() <= short.start()):
                    app = full[1]
                    found.add(f"{app}.{full[2]}")
                    position = full.end()
                    continue
                assert short is not None
                if app is not None:
                    first, last = short[1], short[2] or short[1]
                    for number in range(int(first[1:]), int(last[1:]) + 1):
                        found.add(f"{app}.{first[0]}{number:03d}")
                position = short.end()
    return found


@mutation(
    "docs/tenancy.md",
    find="`tenancy.E010` (`TenancyMiddleware` before Django's\n`AuthenticationMiddleware`), ",
    replace="",
)
def test_every_system_check_id_is_documented() -> None:
    """Mutation: drop ``tenancy.E010`` from the check list of docs/tenancy.md → red: the check
    (TenancyMiddleware before AuthenticationMiddleware) is named nowhere in the docs."""
    registered = registered_ids()
    assert {"tenancy.E003", "mcp_tools.W003", "idempotency.W001"} <= registered  # the scan works
    assert sorted(registered - documented_ids()) == []
