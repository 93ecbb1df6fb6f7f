"""OpenTelemetry for eve: the trace ids carried on events, and the spans of sessions, turns, steps and calls.

- `ids`: the W3C ids every session and turn reports (exported or not), and the trace state
  stored with the checkpoint so that a span can be recorded when its turn ends;
- `recorder`: a session's spans, from the events it emits (the engine's only hook);
- `spans`: spans as the recorder collects them, made into the SDK's on a thread of their own;
- `attributes`: the `gen_ai.*` and `agent.*` attributes, and recorded content (redacted);
- `provider`: the SDK's tracer provider and exporters, failures isolated;
- `console`: `eve dev --trace`'s compact tree of each turn;
- `server`: whether a server records spans, from the `OTEL_*` environment.

Off by default; the SDK is imported only when telemetry is on. See `docs/telemetry.md`.
"""
