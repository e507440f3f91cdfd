"""Settings that keep time-driven work out of an instruction count (``bench/instr_bench.py``).

Under callgrind a call takes about fifty times its wall time, so work that runs once per span
of wall time (the token's ``last_used`` write, the tenant switches' cache refresh, the first
count of each rate window) lands once every few dozen calls instead of once every few
thousand, and whether it lands inside a counted run is luck. With ``INSTR_STEADY=1`` those
spans are a day: the count is each call's own work, what it costs at any real rate. Standard
library only: the peers' settings use it too.
"""

from __future__ import annotations

import os
from typing import Any

DAY = 86_400


def steady(rate_settings: tuple[str, ...]) -> dict[str, Any]:
    """The overrides for a settings module's ``globals().update``: none unless
    ``INSTR_STEADY=1``; ``rate_settings`` are the module's rate budgets, counted per day."""
    if os.environ.get("INSTR_STEADY") != "1":
        return {}
    return {
        "TENANCY_TOKEN_LAST_USED_RESOLUTION_SECONDS": DAY,
        **dict.fromkeys(rate_settings, "1000000000/d"),
    }
