"""Writing many rows' columns in one statement, cheaply.

Django's ``bulk_update`` builds one ``CASE WHEN pk = ... THEN ...`` expression per column, with
a branch per row, and resolves each branch as an ORM expression: for the few seats of a match or
the entries of a refitted ladder that costs more CPU in the worker than the database spends on
the statement (measured in the pipeline bench: most of a result's transaction and of a ladder
refit). ``bulk_set`` writes the same columns with one ``UPDATE ... FROM (VALUES ...)`` on
PostgreSQL, its values adapted by the fields themselves; elsewhere (SQLite, the embedded default)
it is ``bulk_update``.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connections, router
from django.db.models import Model

#: rows per statement (PostgreSQL takes up to 65,535 parameters in one)
BATCH_ROWS = 1000


def bulk_set(objs: Sequence[Model], fields: Sequence[str]) -> int:
    """Write ``fields`` (names, as ``bulk_update`` takes them) of every saved object in ``objs``,
    which are all of one model, in one statement a batch; returns the rows updated.

    >>> bulk_set(seats, ["score", "rank"])  # doctest: +SKIP
    """
    if not objs or not fields:
        return 0
    model = type(objs[0])
    meta = model._meta
    database = router.db_for_write(model)
    connection = connections[database]
    if connection.vendor != "postgresql":
        return model._default_manager.using(database).bulk_update(objs, fields)
    concrete = [meta.get_field(name) for name in fields]
    pk = meta.pk
    columns = [pk, *concrete]
    casts = ", ".join(f"%s::{field.cast_db_type(connection)}" for field in columns)
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    names = ", ".join(quote(f"c{index}") for index in range(len(columns)))
    assignments = ", ".join(f"{quote(field.column)} = v.{quote(f'c{index + 1}')}" for index, field in enumerate(concrete))
    updated = 0
    with connection.cursor() as cursor:
        for start in range(0, len(objs), BATCH_ROWS):
            batch = objs[start:start + BATCH_ROWS]
            params: list = []
            for obj in batch:
                if obj.pk is None:
                    raise ValueError("bulk_set writes saved objects only (one has no primary key)")
                params += [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in columns]
            rows = ", ".join([f"({casts})"] * len(batch))
            cursor.execute(
                f"UPDATE {table} SET {assignments} FROM (VALUES {rows}) AS v({names}) "
                f"WHERE {table}.{quote(pk.column)} = v.{quote('c0')}",
                params,
            )
            updated += cursor.rowcount
    return updated
