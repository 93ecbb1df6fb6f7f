// Following a session's NDJSON stream with `fetch` and a reader.
// The cursor is the absolute index of the next event: a reconnect (the server restarted, a
// lease ended, the network dropped) asks for `startIndex=<cursor>`, so nothing is missed, and an
// event seen before (same `meta.id`) is dropped, so nothing shows twice.

import { authHeaders, reportUnauthorized } from "./api.js";

const TERMINAL = new Set(["session.completed", "session.failed"]);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class SessionStream {
  /**
   * @param {string} path The stream's URL path.
   * @param {{onEvents: (batch: {index: number, event: object}[]) => void, onStatus: (s: string) => void}} sink
   */
  constructor(path, sink) {
    this.path = path;
    this.sink = sink;
    this.cursor = 0;
    this.seen = new Set();
    this.stopped = false;
    this.controller = null;
    this.connections = 0;
  }

  start() {
    this.loop();
    return this;
  }

  stop() {
    this.stopped = true;
    if (this.controller) this.controller.abort();
  }

  async loop() {
    let pause = 0;
    while (!this.stopped) {
      if (pause) await sleep(pause);
      if (this.stopped) return;
      this.controller = new AbortController();
      let outcome;
      try {
        const url = `${this.path}?startIndex=${this.cursor}&streamControlVersion=1`;
        const response = await fetch(url, { headers: authHeaders(), signal: this.controller.signal, cache: "no-store" });
        if (!response.ok) {
          if (response.status === 401) reportUnauthorized();
          this.sink.onStatus(response.status === 404 ? "not-found" : `error ${response.status}`);
          pause = 1000;
          continue;
        }
        this.connections += 1;
        this.sink.onStatus("live");
        outcome = await this.read(response.body.getReader());
      } catch {
        if (this.stopped) return;
        this.sink.onStatus("reconnecting");
        pause = Math.min(pause ? pause * 2 : 150, 1500);
        continue;
      }
      if (outcome === "ended") {
        this.sink.onStatus("ended");
        return;
      }
      pause = outcome === "interrupted" ? 500 : outcome === "lease-ended" ? 0 : 150;
    }
  }

  async read(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    let outcome = "closed";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop(); // an incomplete line waits for the rest (or is dropped with a broken connection)
      const batch = [];
      for (const line of lines) {
        if (!line.trim()) continue; // the opening line and heartbeats
        let event;
        try {
          event = JSON.parse(line);
        } catch {
          continue;
        }
        if (event.$eve) {
          if (event.$eve === "stream.interrupted") outcome = "interrupted";
          else if (event.$eve === "stream.lease-ended") outcome = "lease-ended";
          continue;
        }
        const index = this.cursor++;
        const id = event.meta && event.meta.id;
        if (id && this.seen.has(id)) continue;
        if (id) this.seen.add(id);
        batch.push({ index, event });
        if (TERMINAL.has(event.type)) outcome = "ended";
      }
      if (batch.length) this.sink.onEvents(batch);
    }
    return outcome;
  }
}
