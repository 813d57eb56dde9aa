"""What runs in the agent's copy: the `submit` client and the MCP tool."""
