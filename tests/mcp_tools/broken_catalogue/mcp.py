from mcp_tools import CallContext, tool


@tool(
    name="test_simple_text",
    read_only=True,
    mirrors_no_route="duplicate on purpose",
    description="Collides with the conformance fixture of the same name.",
)
def duplicate(ctx: CallContext) -> str:
    return "never served"
