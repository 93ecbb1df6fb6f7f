"""A real provider's stream through eve, against litellm called directly with the same request.

A local OpenAI-compatible server (its own process, uvicorn on 127.0.0.1) streams a reply of
`words` words, one word a chunk, in one of two ways, chosen by the user message:

- `burst`: every chunk in one write, so the client finds them all buffered at once;
- `paced`: one chunk every 5 ms.

Each round runs the same request twice, interleaved: once through `litellm.acompletion` in this
process (the baseline: the system prompt and tools eve sent, read back from the provider), and once
through eve: a real `eve start` process on the template app
with `openai/gpt-4o-mini` pointed at the local server (`model_options={"api_base": ...}`), the
client (this process, httpx) following the session's NDJSON stream and sending the message on
a kept-alive connection (the stream has its own, as litellm's request reuses its pooled one).

Figures, per mode, medians over the rounds (after warm-up rounds):
- time to first token (TTFT): direct, from the call to the first text chunk; through eve, from
  the message POST to the first `message.appended` line read from the stream. *Added TTFT* is
  their difference (median and p90 of the per-round differences). Target: under 5 ms.
- word rate: words / (time of the last word - time of the request). Target: eve at least 0.9x.
- CPU-s per turn: direct, this process's CPU time over the call; through eve, the eve process's
  CPU time (utime + stime of all its threads, `/proc`) from the POST to the turn's end.
Also the first turn right after `eve start` printed its listening line (litellm is imported in
the background by then, so that turn does not pay for the import).

Run: `.venv/bin/python bench/provider_stream.py [rounds] [words]` (default 40 rounds, 500 words).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

if __package__ in (None, ""):  # run as a script: make `bench` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import REPO_ROOT, median, percentile, verdict

TARGET_ADDED_TTFT_MS = 5.0
TARGET_RATE_RATIO = 0.9
PACE_SECONDS = 0.005
MODES = ("burst", "paced")
MODEL = "openai/gpt-4o-mini"
TOKEN = "provider-bench-token-0123456789"
KEY = "sk-local-not-a-key"
_TICKS = os.sysconf("SC_CLK_TCK")


# -- the provider --------------------------------------------------------------------------------


def _provider_app(words: int) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, StreamingResponse
    from starlette.routing import Route

    def sse(payload: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(payload, separators=(",", ":")).encode() + b"\n\n"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "bench",
                "choices": [choice],
            }
        )

    pieces = [chunk({"role": "assistant", "content": ""})]
    pieces += [chunk({"content": f"w{n} " if n < words - 1 else f"w{n}"}) for n in range(words)]
    pieces.append(chunk({}, "stop"))
    usage = {"prompt_tokens": 20, "completion_tokens": words, "total_tokens": 20 + words}
    pieces.append(
        sse(
            {
                "id": "chatcmpl-bench",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "bench",
                "choices": [],
                "usage": usage,
            }
        )
    )
    pieces.append(b"data: [DONE]\n\n")
    whole = b"".join(pieces)

    requests: list[dict[str, Any]] = []

    async def last_request(request: Request) -> JSONResponse:
        return JSONResponse(requests[-1] if requests else {})

    async def completions(request: Request) -> StreamingResponse:
        body = await request.json()
        requests[:] = [body]
        last = str((body.get("messages") or [{}])[-1].get("content") or "")

        async def stream() -> AsyncIterator[bytes]:
            if "paced" not in last:
                yield whole
                return
            for piece in pieces:
                yield piece
                await asyncio.sleep(PACE_SECONDS)

        return StreamingResponse(stream(), media_type="text/event-stream")

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/last-request", last_request),  # what eve sent: the direct calls send the same
        ]
    )


def serve_provider(words: int) -> None:
    """Serve the provider on a free port; print `port <n>` once listening (the bench's subprocess)."""
    import uvicorn

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    config = uvicorn.Config(_provider_app(words), log_level="critical", lifespan="off")
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.create_task(server.serve(sockets=[listener]))
        while not server.started:
            await asyncio.sleep(0.01)
        print(f"port {listener.getsockname()[1]}", flush=True)
        await task

    asyncio.run(serve())


def provider_command(words: int) -> list[str]:
    """The command that serves the provider (`serve_provider`) in a process of its own."""
    return [sys.executable, str(Path(__file__).resolve()), "--provider", str(words)]


class Process:
    """A child process whose first matching stdout line gives its address; killed on `close`."""

    def __init__(self, command: list[str], pattern: str, *, cwd: Path | None = None, env: dict[str, str] | None = None):
        self.process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"{command[0]} exited with {self.process.wait()} before listening")
            match = re.search(pattern, line)
            if match:
                self.address = match.group(1)
                return
        raise RuntimeError(f"{command} did not print its listening line in time")

    def cpu_seconds(self) -> float:
        """utime + stime of the process (all its threads) so far."""
        with open(f"/proc/{self.process.pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS

    def close(self, *, gently: bool = False) -> None:
        """Kill the process (with `gently`, SIGINT first: py-spy, when profiling, then writes its profile)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT if gently else signal.SIGKILL)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


# -- the two clients -----------------------------------------------------------------------------


@dataclass
class Sample:
    ttft: float
    total: float
    words: int
    cpu: float

    @property
    def rate(self) -> float:
        return self.words / self.total


INSTRUCTIONS = "You are a benchmark agent."


async def direct_turn(litellm: Any, api_base: str, message: str, sent: dict[str, Any] | None = None) -> Sample:
    """One streamed call through `litellm.acompletion`: the request eve `sent` (messages, tools), else a bare one."""
    messages = [{"role": "user", "content": message}]
    extra: dict[str, Any] = {}
    if sent:
        messages = [*sent["messages"][:-1], {"role": "user", "content": message}]
        if sent.get("tools"):
            extra["tools"] = sent["tools"]
    cpu = time.process_time()
    started = time.perf_counter()
    response = await litellm.acompletion(
        model=MODEL,
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        api_base=api_base,
        api_key=KEY,
        max_retries=0,
        drop_params=True,
        **extra,
    )
    first = last = 0.0
    text = []
    async for chunk in response:
        choices = chunk.choices
        if choices and choices[0].delta.content:
            last = time.perf_counter()
            if not first:
                first = last
            text.append(choices[0].delta.content)
    return Sample(first - started, last - started, len("".join(text).split()), time.process_time() - cpu)


async def eve_turn(client: httpx.AsyncClient, streams: httpx.AsyncClient, server: Process, message: str) -> Sample:
    """A session on the eve server: follow its stream, send the message, read until the turn ended.

    The stream has its own client, so the message goes on `client`'s kept-alive connection (the
    session's creation used it), as a client's next message does once its stream is open: the
    timed POST pays no TCP connect, as litellm's own request reuses its pooled connection.
    """
    created = await client.post("/eve/v1/session", json={})
    created.raise_for_status()
    session = created.json()["sessionId"]
    first = last = 0.0
    text: list[str] = []
    async with streams.stream("GET", f"/eve/v1/session/{session}/stream") as stream:
        lines = stream.aiter_lines()
        assert await anext(lines) == ""  # the stream is open
        cpu = server.cpu_seconds()
        started = time.perf_counter()
        sent = await client.post(f"/eve/v1/session/{session}", json={"message": message})
        sent.raise_for_status()
        async for line in lines:
            if not line:
                continue
            event = json.loads(line)
            kind = event["type"]
            if kind == "message.appended":
                last = time.perf_counter()
                if not first:
                    first = last
                text.append(event["data"]["messageDelta"])
            elif kind in ("turn.failed", "session.failed"):
                raise RuntimeError(f"the eve turn failed: {line}")
            elif kind == "session.waiting":
                break
        cpu = server.cpu_seconds() - cpu
    return Sample(first - started, last - started, len("".join(text).split()), cpu)


# -- the app and the run -------------------------------------------------------------------------


def _scaffold(root: Path, api_base: str) -> Path:
    app = root / "app"
    shutil.copytree(REPO_ROOT / "templates" / "default", app)
    for path in app.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            text = (
                text.replace("{{model}}", MODEL).replace("{{name}}", "provider-bench").replace("{{eve_version}}", "0")
            )
            path.write_text(text, encoding="utf-8")
    (app / "agent" / "agent.py").write_text(
        f"from eve_runtime import define_agent\n\nagent = define_agent(model={MODEL!r}, "
        f"model_options={{'api_base': {api_base!r}}})\n",
        encoding="utf-8",
    )
    instructions = app / "agent" / "instructions.md"
    if instructions.exists():
        instructions.write_text(INSTRUCTIONS + "\n", encoding="utf-8")
    return app


def _eve_command() -> list[str]:
    script = Path(sys.executable).with_name("eve")
    return [str(script)] if script.exists() else [sys.executable, "-m", "eve_cli"]


@dataclass
class Figures:
    rounds: int
    words: int
    direct: dict[str, list[Sample]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    eve: dict[str, list[Sample]] = field(default_factory=lambda: {mode: [] for mode in MODES})
    first_turn_ttft: float = 0.0
    """TTFT of the first eve turn right after the server printed its listening line."""
    litellm_import: float = 0.0
    """Seconds this process took to import litellm (what the first turn would pay without the background import)."""

    def added_ttft_ms(self, mode: str) -> list[float]:
        return [(e.ttft - d.ttft) * 1000 for d, e in zip(self.direct[mode], self.eve[mode], strict=True)]

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rounds": self.rounds, "words": self.words, "first_turn_ttft_s": self.first_turn_ttft}
        out["litellm_import_s"] = self.litellm_import
        for mode in MODES:
            added = self.added_ttft_ms(mode)
            direct_rate = median([s.rate for s in self.direct[mode]])
            eve_rate = median([s.rate for s in self.eve[mode]])
            out[mode] = {
                "direct_ttft_ms": median([s.ttft * 1000 for s in self.direct[mode]]),
                "eve_ttft_ms": median([s.ttft * 1000 for s in self.eve[mode]]),
                "added_ttft_ms": median(added),
                "added_ttft_p90_ms": percentile(added, 90),
                "direct_words_per_s": direct_rate,
                "eve_words_per_s": eve_rate,
                "rate_ratio": eve_rate / direct_rate,
                "direct_cpu_s": median([s.cpu for s in self.direct[mode]]),
                "eve_cpu_s": median([s.cpu for s in self.eve[mode]]),
                "eve_words": min(s.words for s in self.eve[mode]),
                "direct_words": min(s.words for s in self.direct[mode]),
            }
        return out


async def measure(rounds: int, words: int, warmup: int) -> Figures:
    figures = Figures(rounds, words)
    provider = Process(provider_command(words), r"port (\d+)")
    server: Process | None = None
    try:
        api_base = f"http://127.0.0.1:{provider.address}/v1"
        with tempfile.TemporaryDirectory() as scratch:
            app = _scaffold(Path(scratch), api_base)
            env = {**os.environ, "EVE_AUTH_TOKEN": TOKEN, "OPENAI_API_KEY": KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
            env.pop("OPENAI_BASE_URL", None)
            command = [*_eve_command(), "start", "--port", "0"]
            profile = os.environ.get("EVE_BENCH_PROFILE")
            if profile:  # py-spy's collapsed stacks of the eve process (`pip install py-spy`); pausing it skews it
                spy = Path(sys.executable).with_name("py-spy")
                sampling = ["--nonblocking", "--format", "raw", "-r", "200", "-o", profile]
                command = [str(spy), "record", *sampling, "--", *command]
            server = Process(command, r"eve listening on (http://\S+)", cwd=app, env=env)
            headers = {"authorization": f"Bearer {TOKEN}"}
            async with (
                httpx.AsyncClient(base_url=server.address, headers=headers, timeout=60) as client,
                httpx.AsyncClient(base_url=server.address, headers=headers, timeout=60) as streams,
            ):
                # The first turn right after start: litellm was imported in the background meanwhile.
                figures.first_turn_ttft = (await eve_turn(client, streams, server, "burst")).ttft
                started = time.perf_counter()
                os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
                import litellm

                figures.litellm_import = time.perf_counter() - started
                litellm.suppress_debug_info = True
                async with httpx.AsyncClient() as provider_client:
                    sent = (await provider_client.get(f"http://127.0.0.1:{provider.address}/last-request")).json()
                for round_index in range(warmup + rounds):
                    for mode in MODES:
                        direct = await direct_turn(litellm, api_base, mode, sent)
                        through_eve = await eve_turn(client, streams, server, mode)
                        if round_index >= warmup:
                            figures.direct[mode].append(direct)
                            figures.eve[mode].append(through_eve)
    finally:
        if server is not None:
            server.close(gently=bool(os.environ.get("EVE_BENCH_PROFILE")))
        provider.close()
    return figures


def run(rounds: int = 40, words: int = 500, warmup: int = 2) -> dict[str, Any]:
    """Measure (see the module docstring); the summary figures."""
    return asyncio.run(measure(rounds, words, warmup)).summary()


def report(figures: dict[str, Any]) -> None:
    print(
        f"a real provider's stream: direct litellm vs eve, {figures['words']} words, {figures['rounds']} rounds "
        f"(target: added TTFT under {TARGET_ADDED_TTFT_MS:.0f} ms, rate at least {TARGET_RATE_RATIO}x)"
    )
    for mode in MODES:
        f = figures[mode]
        ttft_ok = f["added_ttft_ms"] < TARGET_ADDED_TTFT_MS
        rate_ok = f["rate_ratio"] >= TARGET_RATE_RATIO
        print(f"  {mode}:")
        print(
            f"    TTFT                 direct {f['direct_ttft_ms']:7.1f} ms, eve {f['eve_ttft_ms']:7.1f} ms; "
            f"added {f['added_ttft_ms']:6.1f} ms (p90 {f['added_ttft_p90_ms']:.1f})  {verdict(ttft_ok)}"
        )
        print(
            f"    word rate            direct {f['direct_words_per_s']:7,.0f} /s, eve {f['eve_words_per_s']:7,.0f} /s; "
            f"{f['rate_ratio']:.2f}x  {verdict(rate_ok)}"
        )
        print(f"    CPU per turn         direct {f['direct_cpu_s']:.3f} s, eve process {f['eve_cpu_s']:.3f} s")
    print(
        f"  first turn after start: TTFT {figures['first_turn_ttft_s'] * 1000:.0f} ms "
        f"(importing litellm takes {figures['litellm_import_s'] * 1000:.0f} ms here)"
    )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--provider":
        serve_provider(int(sys.argv[2]))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    words = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    report(run(rounds, words))


if __name__ == "__main__":
    main()
