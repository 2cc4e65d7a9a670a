# SPDX-License-Identifier: LGPL-2.1-or-later
"""The --json contract: validate a topotunectl document against
schema/topotunectl.schema.json (one of its $defs, by verb). Used by the
cli and dbus tiers; needs Debian's python3-jsonschema."""
import json
import os

import jsonschema

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema",
                           "topotunectl.schema.json")

with open(SCHEMA_PATH) as _f:
    SCHEMA = json.load(_f)
jsonschema.Draft202012Validator.check_schema(SCHEMA)


def errors(doc, kind):
    """The validation errors of @doc against $defs/@kind and the whole schema, as text."""
    out = []
    sub = dict(SCHEMA["$defs"][kind])
    sub["$defs"] = SCHEMA["$defs"]
    for validator in (jsonschema.Draft202012Validator(sub), jsonschema.Draft202012Validator(SCHEMA)):
        for e in validator.iter_errors(doc):
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            out.append(f"{where}: {e.message[:200]}")
    return out


def parse_and_validate(text, kind):
    """(document or None, errors) for topotunectl's stdout @text."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        return None, [f"not JSON: {e}"]
    return doc, errors(doc, kind)
