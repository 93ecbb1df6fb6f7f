// Building DOM nodes. Text is always set as text (a Text node), never parsed as HTML: whatever a
// model, a tool or a user wrote is shown as it is, and cannot inject markup or script.

/** An element: `h("div", {class: "x", onclick: fn}, "text", child)`. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : String(child));
  }
}

/** Empty a node and fill it again. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** A value as readable JSON text (strings as they are). */
export function pretty(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** "12s", "5m", "3h", "2d" since an ISO time. */
export function age(iso, now = Date.now()) {
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

/** "146 in / 6 out", plus the cost when one was reported. */
export function usageText(usage) {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined)) return "";
  const parts = [`${usage.inputTokens ?? 0} in / ${usage.outputTokens ?? 0} out`];
  if (typeof usage.costUsd === "number") parts.push(`$${usage.costUsd.toFixed(4)}`);
  return parts.join(" · ");
}

/** A link inside the page (hash routes only: nothing a session wrote becomes a URL). */
export function route(...segments) {
  return "#/" + segments.map((s) => encodeURIComponent(String(s))).join("/");
}
