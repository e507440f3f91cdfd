"""What a farm change announces to ``subscriptions/listen`` streams
(``mcp_tools.subscriptions.bus``).

A daily entry recorded, re-recorded or submitted changes two of the farm's resources
(``cluck.mcp.resources``): its flock's record card (its last entries) and its day's entries.
Announced after the service's transaction commits, for the farm's tenant only, as a change
of the entry's flock (a row of the farm's row scope).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from mcp_tools.subscriptions.bus import notify_resource_updated


def daily_entry_changed(*, farm: Any, flock_id: int, date: dt.date) -> None:
    # The flock is the row (the farm's row scope, ``cluck.scope``): a worker not assigned to
    # it hears neither change, not even of a day it can read (its own flocks' entries).
    notify_resource_updated(f"farm://flocks/{flock_id}", tenant=farm, row=flock_id)
    notify_resource_updated(f"farm://days/{date.isoformat()}", tenant=farm, row=flock_id)
