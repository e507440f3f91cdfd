"""``bench/instr_bench.py --threads``: callgrind's numbered per-thread counts named by role."""

from __future__ import annotations

from pathlib import Path

from bench.instr_bench import _by_thread
from tests.mutations import mutation


def _dump(path: Path, instructions: int) -> None:
    path.write_text(f"version: 1\ncmd: python\nevents: Ir\ntotals: {instructions}\n")


@mutation(
    "bench/instr_bench.py",
    find="number = next(n for n in range(1, len(events) + 2) if n not in taken)",
    replace="number = len(names) + 1",
)
def test_a_thread_number_freed_by_an_ended_thread_names_the_next_one(tmp_path: Path) -> None:
    """Callgrind gives a new thread the lowest number no running thread holds, so a thread that
    ended (the start-up checks' helper) hands its number to the next one (the tool worker).

    Mutation: numbering threads in start order only (``number = len(names) + 1``) names thread 3
    after the ended helper and the audit writer's number goes unnamed: red.
    """
    out = tmp_path / "callgrind1.out"
    _dump(tmp_path / "callgrind1.out.1-01", 2_000)  # the main thread's, at the segment's stop
    _dump(tmp_path / "callgrind1.out-01", 0)  # its final dump: nothing counted after the stop
    _dump(tmp_path / "callgrind1.out-02", 3_000)
    _dump(tmp_path / "callgrind1.out-03", 5_000)
    _dump(tmp_path / "callgrind1.out-04", 700)
    events = [
        ["start", "MainThread"],
        ["start", "request_0"],
        ["start", "start-checks_0"],
        ["end", "start-checks_0"],
        ["start", "mcp-tool_0"],
        ["start", "mcp-audit-writer"],
    ]
    assert _by_thread(out, events) == {
        "event loop": 2_000,
        "request thread": 3_000,
        "tool worker": 5_000,
        "audit writer": 700,
    }
