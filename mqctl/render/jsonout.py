"""JSON documents: one object with a schema version, rows under "rows"."""

from __future__ import annotations

import json
from typing import Any, TextIO


def write_json(doc: dict[str, Any], out: TextIO) -> None:
    json.dump(doc, out, ensure_ascii=False, indent=2)
    out.write("\n")
