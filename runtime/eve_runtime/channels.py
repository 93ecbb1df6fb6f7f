"""Channels: HTTP entry points an app authors in `agent/channels/<name>.py`.

```python
from eve_runtime.channels import POST, define_channel


async def receive(request, ctx):
    body = await ctx.json()
    result = await ctx.from_(body["thread"]).send(body["text"])
    return {"ok": True, "sessionId": result.session_id}


channel = define_channel(routes=[POST("/webhook/messages", receive)])
```

This is the import path apps use; the definitions and their full documentation are in
`eve_runtime.authoring.channels` (and the auth helpers in `eve_runtime.authoring.channel_auth`).
"""

from __future__ import annotations

from eve_runtime.authoring.channels import (
    DELETE,
    GET,
    PATCH,
    POST,
    PUT,
    AuthError,
    Channel,
    ChannelRoute,
    EveChannel,
    InvalidAddress,
    Principal,
    allow_anonymous,
    bearer_token,
    channel_address,
    define_channel,
    disable_channel,
    eve_channel,
    local_dev,
)

__all__ = [
    "DELETE",
    "GET",
    "PATCH",
    "POST",
    "PUT",
    "AuthError",
    "Channel",
    "ChannelRoute",
    "EveChannel",
    "InvalidAddress",
    "Principal",
    "allow_anonymous",
    "bearer_token",
    "channel_address",
    "define_channel",
    "disable_channel",
    "eve_channel",
    "local_dev",
]
