"""What a run leaves behind: `.eve/evals/<timestamp>/` artifacts and a JUnit XML file.

The artifacts directory holds `summary.json` (the run: target, counts, each eval's status),
`results.jsonl` (one eval per line with its assertions), and under `evals/` one
`<id>.json` (the result with its `t.log` lines) and `<id>.events.jsonl` (every event of its
sessions, each line `{"sessionId", "event"}`) per eval. JUnit has one `<testcase>` per eval:
`<failure>` for a failed or (under `--strict`) scored eval, `<error>` for one that raised or timed
out, `<skipped>` for `t.skip`.
"""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eve_runtime.evals.runner import EvalResult

__all__ = ["artifacts_dir", "failed", "summary", "write_artifacts", "write_junit"]


def artifacts_dir(eve_dir: Path, started: float) -> Path:
    """A new `.eve/evals/<timestamp>/` for a run that started at `started` (UTC, unique)."""
    stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime(started))
    base = eve_dir / "evals"
    candidate, suffix = base / stamp, 1
    while candidate.exists():
        suffix += 1
        candidate = base / f"{stamp}-{suffix}"
    return candidate


def failed(result: EvalResult, *, strict: bool) -> bool:
    """Whether the result fails the run (`scored` only under `strict`)."""
    return result.status in ("failed", "error") or (strict and result.status == "scored")


def summary(results: Sequence[EvalResult], *, target: str, started: float, strict: bool) -> dict[str, Any]:
    """The `summary.json` document."""
    counts = Counter(result.status for result in results)
    return {
        "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "durationMs": round((time.time() - started) * 1000, 1),
        "target": target,
        "strict": strict,
        "ok": not any(failed(result, strict=strict) for result in results),
        "counts": {status: counts.get(status, 0) for status in ("passed", "failed", "scored", "skipped", "error")},
        "evals": [
            {"id": r.id, "status": r.status, "durationMs": round(r.duration_ms, 1), "sessionIds": r.session_ids}
            for r in results
        ],
    }


def _file_name(eval_id: str) -> str:
    return eval_id.replace("/", "__")


def write_artifacts(directory: Path, results: Sequence[EvalResult], document: dict[str, Any]) -> Path:
    """Write a run's artifacts into `directory` (created); returns it."""
    per_eval = directory / "evals"
    per_eval.mkdir(parents=True, exist_ok=True)
    (directory / "summary.json").write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
    with (directory / "results.jsonl").open("w", encoding="utf-8") as lines:
        for result in results:
            lines.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
    for result in results:
        name = _file_name(result.id)
        detail = {**result.to_json(), "logs": result.logs}
        (per_eval / f"{name}.json").write_text(json.dumps(detail, indent=2, ensure_ascii=False) + "\n", "utf-8")
        with (per_eval / f"{name}.events.jsonl").open("w", encoding="utf-8") as events:
            for session_id, session_events in result.events.items():
                for event in session_events:
                    events.write(json.dumps({"sessionId": session_id, "event": event}, ensure_ascii=False) + "\n")
    return directory


def _failure_text(result: EvalResult) -> str:
    lines = [
        f"{item.name} ({item.severity}, score {item.score:.2f}): {item.error or item.message}"
        for item in result.failures
    ]
    if not result.assertions:
        lines.append("the eval recorded no assertions")
    return "\n".join(lines)


def write_junit(path: Path, results: Sequence[EvalResult], *, strict: bool) -> Path:
    """Write a JUnit XML report of the run to `path` (its folder created)."""
    suite = ET.Element(
        "testsuite",
        name="eve eval",
        tests=str(len(results)),
        failures=str(sum(1 for r in results if r.status == "failed" or (strict and r.status == "scored"))),
        errors=str(sum(1 for r in results if r.status == "error")),
        skipped=str(sum(1 for r in results if r.status == "skipped")),
        time=f"{sum(r.duration_ms for r in results) / 1000:.3f}",
    )
    for result in results:
        classname, _, name = result.id.rpartition("/")
        case = ET.SubElement(
            suite,
            "testcase",
            classname=classname or "evals",
            name=name or result.id,
            time=f"{result.duration_ms / 1000:.3f}",
        )
        if result.status == "error":
            element = ET.SubElement(case, "error", message=(result.error or "error").splitlines()[0])
            element.text = result.error
        elif result.status == "failed" or (strict and result.status == "scored"):
            text = _failure_text(result)
            element = ET.SubElement(case, "failure", message=text.splitlines()[0] if text else result.status)
            element.text = text
        elif result.status == "skipped":
            ET.SubElement(case, "skipped", message=result.skip_reason or "skipped")
        if result.logs:
            ET.SubElement(case, "system-out").text = "\n".join(result.logs)
    path.parent.mkdir(parents=True, exist_ok=True)
    root = ET.Element("testsuites")
    root.append(suite)
    tree = ET.ElementTree(root)
    ET.indent(tree)
    tree.write(path, encoding="utf-8", xml_declaration=True)
    return path
