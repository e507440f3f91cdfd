"""``mcp_tools``: stateless MCP on /mcp (placeholder; being built)."""
