"""The OpenAPI schema keeps its operations: the endpoints moved into the apps that own them
(bots/apis.py, matches/apis.py, ...) and the schema had to stay the same operation for operation.

The fixture ``openapi_operations.json`` was generated before the move by ``schema_operations.py``;
a change of the API on purpose regenerates it (see that module), and the diff shows what changed.
"""

from __future__ import annotations

import json
from pathlib import Path

from schema_operations import schema_operations

FIXTURE = Path(__file__).with_name("openapi_operations.json")


def test_generated_schema_has_the_same_operations_and_components_as_the_fixture():
    expected = json.loads(FIXTURE.read_text())
    actual = schema_operations()
    assert [(o["method"], o["path"], o["operationId"]) for o in actual["operations"]] == [
        (o["method"], o["path"], o["operationId"]) for o in expected["operations"]
    ]
    assert actual["operations"] == expected["operations"]
    assert actual["components"] == expected["components"]
