"""A custom channel: a small webhook. The file name (`webhook`) is the channel's name.

    POST /webhook/messages                 {"thread": "t-1", "text": "Weather in Paris?", "id": "msg-1"}
    GET  /webhook/threads/{thread}/replies  the agent's replies to that thread (its outbox)
    POST /webhook/threads/{thread}/cancel   stop the thread's running turn
    POST /webhook/threads/{thread}/end      end the thread's session (its next message starts a new one)

Each thread is one conversation: its first message starts a session that claims the address,
later ones continue it. A repeated `id` (a webhook retried by its sender) is delivered once.
Replies are posted back by the `message.completed` handler; here "posting" appends them to an
outbox file under .eve/, so the example runs offline. A real channel would call the platform's
API there instead.

Under `eve dev` requests from this machine are accepted; under `eve start` send
`Authorization: Bearer $EVE_AUTH_TOKEN`.
"""

import json
import threading
from pathlib import Path
from typing import Any

from eve_runtime.authoring.channels import GET, POST, bearer_token, define_channel, local_dev

OUTBOX = Path(__file__).resolve().parents[2] / ".eve" / "webhook-outbox.jsonl"
_writing = threading.Lock()


def _bad(message: str) -> tuple[dict[str, Any], int]:
    return {"ok": False, "error": message, "code": "invalid_request"}, 400


def _thread(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 200 else None


async def receive(request, ctx):
    body = await ctx.json()
    thread, text, message_id = _thread(body.get("thread")), body.get("text"), body.get("id")
    if thread is None:
        return _bad("Expected 'thread': a non-empty string of at most 200 characters.")
    if not isinstance(text, str) or not text.strip():
        return _bad("Expected 'text': a non-empty string.")
    if message_id is not None and not isinstance(message_id, str):
        return _bad("Expected 'id' to be a string when given.")
    sent = await ctx.from_(thread).send(text, idempotency_key=message_id)
    return {"ok": True, "sessionId": sent.session_id, "deliveryId": sent.delivery_id, "created": sent.created}, 202


def replies(request, ctx):
    thread = ctx.params["thread"]
    found = []
    if OUTBOX.exists():
        for line in OUTBOX.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry["thread"] == thread:
                found.append(entry)
    return {"ok": True, "thread": thread, "replies": found}


async def cancel(request, ctx):
    return {"ok": True, **await ctx.from_(ctx.params["thread"]).cancel()}


async def end(request, ctx):
    return {"ok": True, **await ctx.from_(ctx.params["thread"]).end(reason="ended through the webhook")}


def post_reply(data, channel):
    """Post the agent's answer back to the thread (narration before tool calls is skipped)."""
    if data.get("finishReason") == "tool-calls":
        return
    entry = {"thread": channel.address, "sessionId": channel.session_id, "text": data["message"]}
    with _writing:
        OUTBOX.parent.mkdir(parents=True, exist_ok=True)
        with OUTBOX.open("a", encoding="utf-8") as outbox:
            outbox.write(json.dumps(entry) + "\n")


channel = define_channel(
    routes=[
        POST("/webhook/messages", receive),
        GET("/webhook/threads/{thread}/replies", replies),
        POST("/webhook/threads/{thread}/cancel", cancel),
        POST("/webhook/threads/{thread}/end", end),
    ],
    events={"message.completed": post_reply},
    auth=[local_dev(), bearer_token()],
)
