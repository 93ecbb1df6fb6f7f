"""OpenTelemetry for eve: the trace ids carried on events, and the spans of sessions, turns, steps and calls.

`ids` mints the W3C ids every session and turn reports (exported or not); `recorder` turns a
session's events into spans; `provider` builds the SDK's tracer provider and exporters (imported
only when telemetry is on); `console` prints `eve dev --trace`'s compact trees. Off by default:
see `docs/telemetry.md`.
"""
