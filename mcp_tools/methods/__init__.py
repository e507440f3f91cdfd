"""The MCP methods, one module per family; each handler takes an ``RpcRequest``."""
