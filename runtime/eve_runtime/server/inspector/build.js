// The build: polls GET /eve/v1/dev/build and shows a broken save's diagnostics on every page
// until a save fixes it.

import { getJson } from "./api.js";
import { fill, h } from "./dom.js";

const POLL_MS = 1000;

export function diagnosticsList(diagnostics) {
  if (!diagnostics.length) return null;
  return h(
    "ul",
    { class: "diagnostics" },
    diagnostics.map((d) =>
      h(
        "li",
        { class: `diagnostic severity-${d.severity}` },
        h("code", {}, d.line ? `${d.sourcePath}:${d.line}` : d.sourcePath ?? ""),
        " ",
        h("span", { class: "diagnostic-message" }, d.message ?? ""),
        " ",
        h("span", { class: "diagnostic-code" }, `[${d.code ?? ""}]`),
      ),
    ),
  );
}

export class BuildWatch {
  constructor(banner) {
    this.banner = banner;
    this.status = null;
    this.listeners = new Set();
    this.poll();
    this.timer = setInterval(() => document.hidden || this.poll(), POLL_MS);
  }

  subscribe(listener) {
    this.listeners.add(listener);
    if (this.status) listener(this.status, false);
    return () => this.listeners.delete(listener);
  }

  async poll() {
    let status;
    try {
      status = await getJson("/eve/v1/dev/build");
    } catch {
      return; // the server restarting, or no token yet: the next poll tries again
    }
    const before = this.status;
    const changed = before !== null && (before.generation !== status.generation || before.rebuilds !== status.rebuilds);
    this.status = status;
    this.draw(status);
    for (const listener of this.listeners) listener(status, changed);
  }

  draw(status) {
    const failed = status.status === "failed";
    this.banner.hidden = !failed;
    this.banner.dataset.status = status.status;
    if (!failed) {
      fill(this.banner);
      return;
    }
    const serving = status.serving === false ? "nothing serves until a save compiles" : `generation ${status.generation} still serves`;
    fill(this.banner, h("strong", {}, "The last save has errors"), ` (${serving}):`, diagnosticsList(status.diagnostics || []));
  }
}
