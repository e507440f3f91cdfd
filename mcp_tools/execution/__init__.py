"""Running user code for one request: arguments, bounds, results, writes, the runner.

The public execution entry point for another protocol over the same tools (A2A does:
``a2a_tools``): validate, run bounded, run a tool (the one read/write choice), shape errors.
"""

from mcp_tools.codes import (
    CODE_CAPABILITY_REQUIRED,
    CODE_IN_PROGRESS,
    CODE_INTERNAL,
    CODE_INVALID_ARGUMENTS,
    CODE_KEY_REUSED,
    FORBIDDEN,
    OVERLOADED,
    RATE_LIMITED,
    TIMED_OUT,
    UNAUTHENTICATED,
)
from mcp_tools.execution.arguments import validate_arguments
from mcp_tools.execution.bounds import (
    MAX_WORKER_THREADS,
    BoundError,
    overloaded,
    retry_after_header,
    run_bounded,
    run_on_loop,
    slots,
)
from mcp_tools.execution.results import (
    error_result,
    failure_result,
    internal_error_result,
    run_read,
    run_read_on_loop,
    success_result,
    translate,
)
from mcp_tools.execution.runner import run_tool
from mcp_tools.execution.writes import run_write
from mcp_tools.rpc.jsonrpc import unstorable_strings

__all__ = [
    "CODE_CAPABILITY_REQUIRED",
    "CODE_INTERNAL",
    "CODE_INVALID_ARGUMENTS",
    "CODE_IN_PROGRESS",
    "CODE_KEY_REUSED",
    "FORBIDDEN",
    "MAX_WORKER_THREADS",
    "OVERLOADED",
    "RATE_LIMITED",
    "TIMED_OUT",
    "UNAUTHENTICATED",
    "BoundError",
    "error_result",
    "failure_result",
    "internal_error_result",
    "overloaded",
    "retry_after_header",
    "run_bounded",
    "run_on_loop",
    "run_read",
    "run_read_on_loop",
    "run_tool",
    "run_write",
    "slots",
    "success_result",
    "translate",
    "unstorable_strings",
    "validate_arguments",
]
