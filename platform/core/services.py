"""Services of the core app (functions that write)."""

from __future__ import annotations

import platform
import socket
from collections.abc import Sequence

from django.db import connections, router, transaction
from django.db.models import Model, QuerySet
from django.db.models import sql as models_sql
from django.db.models.functions import Now

from .models import WorkerHeartbeat


def worker_heartbeat_record(
    hostname: str | None = None, *, healthy: bool = True, reason: str = "", consuming: bool = True
) -> WorkerHeartbeat:
    """Record that the calling worker is alive, on the database's clock, with its health
    (matches.worker); returns the stored heartbeat."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname or socket.gethostname(),
        defaults={
            "last_seen": Now(), "python_platform": platform.platform()[:255],
            "healthy": healthy, "health_reason": reason[:2000], "consuming": consuming,
        },
    )
    beat.refresh_from_db(fields=["last_seen"])
    return beat


def rows_update(objs: Sequence[Model], fields: Sequence[str]) -> int:
    """Write ``fields`` of each of ``objs`` (rows of one model, saved before) to its row: one
    ``UPDATE ... WHERE pk = %s`` statement executed for all of them (psycopg pipelines it).

    The same effect as ``Model.objects.bulk_update(objs, fields)``, without its ``CASE WHEN pk = ...``
    over every row of a batch for every field, which the database evaluates per row: for the
    1,000 entries of a ladder's refit that took 3-5 s under load and 1 s of Python, in a
    transaction whose row locks a match's result waits for; this takes tens of milliseconds.
    Returns the number of rows given. Pre-save hooks (``auto_now``) are not run, as with
    ``bulk_update``.
    """
    if not objs:
        return 0
    model = type(objs[0])
    meta = model._meta
    connection = connections[router.db_for_write(model)]
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    sql = "UPDATE {} SET {} WHERE {} = %s".format(
        quote(meta.db_table),
        ", ".join(f"{quote(field.column)} = %s" for field in columns),
        quote(meta.pk.column),
    )
    rows = [
        [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in columns]
        + [meta.pk.get_db_prep_value(obj.pk, connection)]
        for obj in objs
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)
    return len(rows)


def update_returning(queryset: QuerySet, returning: Sequence[str], **values) -> list[Model]:
    """``queryset.update(**values)`` that also returns the rows it changed: one ``UPDATE ... RETURNING``
    statement (PostgreSQL; SQLite from 3.35), where an update and a read of the row would be two.

    Each row comes back as an instance of the queryset's model with its primary key and the
    ``returning`` fields as the update left them (the others deferred: read if touched). The
    rows are locked until the transaction ends, as by any update; none when nothing matched.
    The update is compiled by Django as ``update()`` compiles it (filters, F() and Now()), on one
    table only (no update of a parent model's fields).
    """
    model = queryset.model
    query = queryset.query.chain(models_sql.UpdateQuery)
    query.add_update_values(values)
    query.annotations = {}
    if query.related_updates:
        raise ValueError(f"update_returning updates one table; {sorted(values)} reach a parent of {model.__name__}")
    connection = connections[queryset.db]
    if not connection.features.can_return_rows_from_bulk_insert:  # SQLite before 3.35: no RETURNING
        with transaction.atomic(using=queryset.db):
            pks = list(queryset.select_for_update().values_list("pk", flat=True))
            changed = model._base_manager.using(queryset.db).filter(pk__in=pks)
            changed.update(**values)
            return list(changed.only(*returning))
    sql, params = query.get_compiler(queryset.db).as_sql()
    if not sql:
        return []
    meta = model._meta
    wanted = {meta.pk.attname} | {meta.get_field(name).attname for name in returning}
    fields = [field for field in meta.concrete_fields if field.attname in wanted]  # Model.from_db's order
    quote = connection.ops.quote_name
    columns = [field.get_col(meta.db_table) for field in fields]
    converters = [
        connection.ops.get_db_converters(column) + column.get_db_converters(connection) for column in columns
    ]
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} RETURNING {', '.join(quote(field.column) for field in fields)}", params)
        rows = cursor.fetchall()
    names = [field.attname for field in fields]
    found = []
    for row in rows:
        converted = list(row)
        for i, functions in enumerate(converters):
            for convert in functions:
                converted[i] = convert(converted[i], columns[i], connection)
        found.append(model.from_db(queryset.db, names, converted))
    return found
