"""The HTTP API: the starlette app of `/eve/v1`, its auth, request bodies, streams and channel routes."""
