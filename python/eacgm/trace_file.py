"""`eacgm.read_trace()`: the files `eacgm trace` writes, back in Python."""

from __future__ import annotations

import json
from typing import Any, Dict, List


def read_trace(path: str, frame: bool = False) -> Any:
    """The events of a JSON Lines file (`eacgm trace -o FILE`, docs/events.md) or a
    Perfetto / Chrome trace (`--format perfetto`, or to_perfetto's JSON array): a list of
    dicts (a pandas DataFrame with frame=True). A Perfetto file cut short (eacgm killed
    before its closing `]}`) is read as far as it goes."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    head = text.lstrip()[:1]
    events: List[Dict[str, Any]]
    if head == "[" or (head == "{" and '"traceEvents"' in text[:200]):
        events = _perfetto(text)
    else:
        events = [json.loads(line) for line in text.splitlines() if line.strip()]
    if frame:
        import pandas

        return pandas.DataFrame(events)
    return events


def _perfetto(text: str) -> List[Dict[str, Any]]:
    for tail in ("", "]}", "]"):
        try:
            doc = json.loads(text.rstrip().rstrip(",") + tail)
            break
        except ValueError:
            continue
    else:
        raise ValueError("not a Perfetto JSON trace (neither an array nor {\"traceEvents\": [...]})")
    return doc["traceEvents"] if isinstance(doc, dict) else doc
