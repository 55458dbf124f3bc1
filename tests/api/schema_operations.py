"""The operations of the generated OpenAPI schema, in a form two versions of the code can compare.

``python tests/api/schema_operations.py > tests/api/openapi_operations.json`` (from the project
root, with ``DJANGO_SETTINGS_MODULE=arena.settings`` and ``platform`` on the path) writes the fixture
that ``test_api_schema.py`` compares the schema with.
"""

from __future__ import annotations

import json


def _refs(node) -> list[str]:
    """Every component a part of the schema points at, sorted."""
    found: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "$ref":
                    found.add(inner.rsplit("/", 1)[-1])
                else:
                    walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    walk(node)
    return sorted(found)


def schema_operations() -> dict:
    """Each operation (path, method) with its operationId, parameters, request and response codes and
    the components they refer to, and each component's fields (or an enum's values)."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = []
    for path, item in sorted(schema["paths"].items()):
        for method, operation in sorted(item.items()):
            operations.append({
                "path": path,
                "method": method,
                "operationId": operation["operationId"],
                "parameters": sorted(f"{p['in']}:{p['name']}" for p in operation.get("parameters", [])),
                "request": _refs(operation.get("requestBody", {})),
                "responses": {code: _refs(answer) for code, answer in sorted(operation["responses"].items())},
            })
    components = {
        name: sorted(part.get("properties", {})) or sorted(map(str, part.get("enum", [])))
        for name, part in sorted(schema["components"]["schemas"].items())
    }
    return {"operations": operations, "components": components}


if __name__ == "__main__":
    import django

    django.setup()
    print(json.dumps(schema_operations(), indent=1, sort_keys=True))
