"""Services of the core app (functions that write)."""

from __future__ import annotations

import functools
import platform
import socket
from collections.abc import Iterable, Sequence
from typing import Any

from django.apps import apps
from django.core.cache import cache
from django.db import connections, router, transaction
from django.db.models import Model, QuerySet
from django.db.models import sql as models_sql
from django.db.models.functions import Now

from .models import WorkerHeartbeat


class _CacheDrop:
    """The cache keys the current transaction drops when it commits (``cache_delete_on_commit``)."""

    def __init__(self, keys: Iterable[str]):
        self.keys = dict.fromkeys(keys)  # in the order asked, once each

    def __call__(self) -> None:
        cache.delete_many(list(self.keys))


def cache_delete_on_commit(keys: Iterable[str], *, using: str | None = None) -> None:
    """Drop ``keys`` from the default cache once the current transaction commits (at once outside one).

    Every key a transaction asks for goes in one ``delete_many`` at its commit: one round trip to a
    shared cache (Redis) for a stored result, whose hooks each drop their pages' keys (the home
    page's counts, its versions' numbers), where a ``delete_many`` each was one round trip each. A
    savepoint rolled back after adding keys to one registered before it still drops them: a drop
    is never wrong, only a miss sooner.
    """
    connection = transaction.get_connection(using)
    if connection.in_atomic_block:
        for _, pending, *_ in connection.run_on_commit:  # this transaction's, registered and not run yet
            if isinstance(pending, _CacheDrop):
                pending.keys.update(dict.fromkeys(keys))
                return
    transaction.on_commit(_CacheDrop(keys), using=using)


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


def _values_update(objs: Sequence[Model], fields: Sequence[str], connection, *, also: str = "") -> tuple[str, list]:
    """PostgreSQL: one ``UPDATE ... FROM (VALUES ...)`` writing ``fields`` of each saved row of
    ``objs`` (rows of one model); ``also``: more ``FROM`` items, joined to every row (a row of a
    ``WITH`` makes the update conditional on it). Returns the statement (built once per process
    for each shape: ``values_update_sql``) and its parameters."""
    model = type(objs[0])
    sql = values_update_sql(model._meta.label, tuple(fields), len(objs), connection.alias, also)
    return sql, values_update_params(objs, fields, connection)


def values_update_sql(model: str, fields: tuple[str, ...], count: int, alias: str, also: str = "") -> str:
    """The text of ``_values_update`` for ``count`` rows of ``model`` (its label, ``app.Model``) on
    PostgreSQL, from its ``_meta``; its parameters: ``values_update_params``. Its parts are built
    once per process (``_values_update_parts``): a hot statement (a result's seats, a ladder's
    entries) does not quote and type each column again per call, and a refit's thousand rows are
    one row's text repeated."""
    head, row, tail = _values_update_parts(model, fields, alias, also)
    return f"{head}{', '.join([row] * count)}{tail}"


@functools.lru_cache(maxsize=128)
def _values_update_parts(model: str, fields: tuple[str, ...], alias: str, also: str) -> tuple[str, str, str]:
    """``values_update_sql`` before, in and after its ``VALUES`` list (one row's placeholders)."""
    connection = connections[alias]
    meta = apps.get_model(model)._meta
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    columns = [meta.pk] + [meta.get_field(name) for name in fields]
    row = "({})".format(", ".join(
        f"%s::{field.rel_db_type(connection) if field.primary_key else field.db_type(connection)}" for field in columns
    ))
    head = f"UPDATE {table} SET " + ", ".join(f"{quote(field.column)} = v.{quote(field.column)}" for field in columns[1:])
    tail = (
        f") AS v({', '.join(quote(field.column) for field in columns)})"
        + (f", {also}" if also else "") + f" WHERE {table}.{pk} = v.{pk}"
    )
    return f"{head} FROM (VALUES ", row, tail


def values_update_params(objs: Sequence[Model], fields: Sequence[str], connection) -> list:
    """The parameters of ``values_update_sql`` for ``objs``: per row its primary key, then ``fields``
    as saving them would write them (``get_db_prep_save``)."""
    meta = objs[0]._meta
    pk = meta.pk
    columns = [meta.get_field(name) for name in fields]
    params = []
    for obj in objs:
        params.append(pk.get_db_prep_value(obj.pk, connection))
        params += [field.get_db_prep_save(getattr(obj, field.attname), connection) for field in columns]
    return params


def rows_insert_update(new: Sequence[Model], objs: Sequence[Model], fields: Sequence[str]) -> None:
    """Insert the unsaved rows ``new`` (as ``bulk_create``, their ``pre_save`` hooks run, but their
    primary keys are not read back: ``new`` stays unsaved in memory) and write ``fields`` of the saved
    rows ``objs`` (as ``rows_update``), on PostgreSQL in one statement: the insert a data-modifying
    ``WITH`` of one ``UPDATE ... FROM (VALUES ...)``, where the two are two round trips. Both sides
    may be empty; elsewhere the two calls."""
    using = router.db_for_write(type(new[0] if new else objs[0])) if (new or objs) else None
    if using is None:
        return
    connection = connections[using]
    if connection.vendor != "postgresql" or not objs or not new:
        if new:
            type(new[0]).objects.using(using).bulk_create(new)
        rows_update(objs, fields)
        return
    model = type(new[0])
    columns = [f for f in model._meta.concrete_fields if not f.primary_key]
    # the values as bulk_create saves them (pre_save: auto_now_add); the statement built once per
    # process for each model and row count, unless a value is an expression (Django compiles those)
    insert_params = [
        value if hasattr(value, "resolve_expression") else field.get_db_prep_save(value, connection)
        for obj in new for field in columns for value in (field.pre_save(obj, True),)
    ]
    if any(hasattr(value, "resolve_expression") for value in insert_params):
        insert = models_sql.InsertQuery(model)
        insert.insert_values(columns, new)
        ((insert_sql, insert_params),) = insert.get_compiler(using).as_sql()
    else:
        insert_sql = _insert_sql(model._meta.label, len(new), using)
    update_sql, update_params = _values_update(objs, fields, connection)
    sql, params = f"WITH inserted AS ({insert_sql}) {update_sql}", [*insert_params, *update_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


#: the ``FROM`` item (``_values_update``'s ``also``) that joins each rows' update of ``with_rows_sql``
#: to one row of the update's: it writes nothing when the update changed none
CHANGED_ONLY = "(SELECT 1 FROM changed LIMIT 1) AS changed"


def with_rows_sql(update_sql: str, rows_sql: Sequence[str]) -> str:
    """PostgreSQL: ``update_sql`` (an ``UPDATE ... RETURNING``) and the rows' updates ``rows_sql``
    (``_values_update``'s, joined to ``CHANGED_ONLY``) as one statement, returning the update's rows."""
    written = ", ".join(f"written_{i} AS ({sql})" for i, sql in enumerate(rows_sql))
    return f"WITH changed AS ({update_sql}), {written} SELECT * FROM changed"


def _insert_sql(model: str, count: int, alias: str) -> str:
    """``INSERT INTO`` the table of ``model`` (its label) of ``count`` rows of all its concrete columns
    but the primary key (``rows_insert_update``'s order), plain ``%s`` placeholders, from its
    ``_meta`` (the columns' part once per process)."""
    head, row = _insert_parts(model, alias)
    return f"{head}{', '.join([row] * count)}"


@functools.lru_cache(maxsize=64)
def _insert_parts(model: str, alias: str) -> tuple[str, str]:
    """``_insert_sql`` up to its ``VALUES`` list, and one row's placeholders."""
    quote = connections[alias].ops.quote_name
    meta = apps.get_model(model)._meta
    columns = [f for f in meta.concrete_fields if not f.primary_key]
    row = "({})".format(", ".join(["%s"] * len(columns)))
    return f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in columns)}) VALUES ", row


def update_returning(
    queryset: QuerySet, returning: Sequence[str], *, rows: Sequence[tuple[Sequence[Model], Sequence[str]]] = (), **values
) -> list[Model]:
    """``queryset.update(**values)`` that also returns the rows it changed: one ``UPDATE ... RETURNING``
    statement (PostgreSQL; SQLite from 3.35), where an update and a read of the row would be two.

    Each row comes back as an instance of the queryset's model with its primary key and the
    ``returning`` fields as the update left them (the others deferred: read if touched). The
    rows are locked until the transaction ends, as by any update; none when nothing matched.
    The update is compiled by Django as ``update()`` compiles it (filters, F() and Now()), on one
    table only (no update of a parent model's fields).

    ``rows``: pairs of (saved rows of one model, their fields), written as ``rows_update`` writes
    them when the update changed a row, none else: on PostgreSQL by the same statement (a ``WITH``
    for each pair: one statement is one transaction of its own, no ``BEGIN`` and ``COMMIT`` needed
    around it), elsewhere in a transaction with the update.
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
            found = list(changed.only(*returning))
            if found:
                for objs, names in rows:
                    rows_update(objs, names)
            return found
    sql, params = query.get_compiler(queryset.db).as_sql()
    if not sql:
        return []
    meta = model._meta
    wanted = {meta.pk.attname} | {meta.get_field(name).attname for name in returning}
    fields = [field for field in meta.concrete_fields if field.attname in wanted]  # Model.from_db's order
    quote = connection.ops.quote_name
    sql = f"{sql} RETURNING {', '.join(quote(field.column) for field in fields)}"
    rows = [(objs, names) for objs, names in rows if objs]
    if rows and connection.vendor == "postgresql":
        written: list[str] = []
        for objs, names in rows:
            rows_sql, rows_params = _values_update(objs, names, connection, also=CHANGED_ONLY)
            written.append(rows_sql)
            params = (*params, *rows_params)
        sql = with_rows_sql(sql, written)
    elif rows:
        with transaction.atomic(using=queryset.db), connection.cursor() as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchall()
            if found:
                for objs, names in rows:
                    rows_update(objs, names)
        return model_rows(model, fields, found, using=queryset.db)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    return model_rows(model, fields, found, using=queryset.db)


def model_rows(model: type[Model], fields: Sequence, rows, *, using: str = "default") -> list[Model]:
    """Rows a statement of one's own returned (the columns of ``fields``, concrete fields of ``model``
    in its ``_meta`` order, the primary key among them) as instances of ``model``, each value through
    the converters Django applies when it reads that column (the others deferred: read if touched)."""
    connection = connections[using]
    converters = _row_converters(model._meta.label, tuple(fields), connection)
    names = [field.attname for field in fields]
    return [model.from_db(using, names, converted_row(connection, row, converters)) for row in rows]


@functools.lru_cache(maxsize=256)
def _row_converters(model: str, fields: tuple, connection) -> list[tuple[int, list, Any]]:
    """``model_rows``' converters of ``fields`` (``db_converters`` of their columns; ``model``: its
    label): found once for each model and fields per connection (a thread's: the converters are its
    bound methods), not per call (hot: a result and its hooks read four rows a match)."""
    return db_converters(connection, [field.get_col(apps.get_model(model)._meta.db_table) for field in fields])


def db_converters(connection, columns: Sequence) -> list[tuple[int, list, Any]]:
    """The converters Django applies to each of ``columns`` (expressions: a field's ``get_col``, a
    compiler's ``select``) when it reads them on ``connection``: (index, functions, column) of those
    that have any. Computed once, applied to each row by ``converted_row``."""
    found = []
    for index, column in enumerate(columns):
        functions = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if functions:
            found.append((index, functions, column))
    return found


def converted_row(connection, row: Sequence, converters: list[tuple[int, list, Any]]) -> list:
    """``row``'s values as Django reads them: each through its column's ``converters`` (``db_converters``)."""
    values = list(row)
    for index, functions, column in converters:
        value = values[index]
        for convert in functions:
            value = convert(value, column, connection)
        values[index] = value
    return values
