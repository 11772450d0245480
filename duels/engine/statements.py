"""A step's writes compiled to SQL before the transaction that runs them.

A step's transaction holds the database's one writer (SQLite's, and the turn the writers of a
process queue on), and every other episode's step waits for it. Compiling an ORM UPDATE or
INSERT is Python work, a millisecond or more when a worker's episode threads share one
interpreter; measured in a 16-episode tournament, a step held the writer 3.9 ms, of which the
UPDATE and the INSERT took 1.7 ms each. So the statements are compiled first and the
transaction only runs them. The SQL is Django's own (its compilers), so field conversions,
quoting and the database's dialect are exactly what `QuerySet.update()` and `Model.save()`
produce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.sql import InsertQuery, UpdateQuery


@dataclass(frozen=True)
class CompiledUpdate:
    sql: str
    params: tuple
    using: str

    def run(self) -> int:
        """Run the UPDATE; return how many rows it matched."""
        with connections[self.using].cursor() as cursor:
            cursor.execute(self.sql, self.params)
            return cursor.rowcount


@dataclass(frozen=True)
class CompiledInsert:
    sql: str
    params: tuple
    using: str
    returning_params: Any
    obj: Model

    def run(self) -> Model:
        """Run the INSERT and give the object its primary key, as `save()` does."""
        connection = connections[self.using]
        meta = self.obj._meta
        with connection.cursor() as cursor:
            cursor.execute(self.sql, self.params)
            if self.returning_params is not None:
                (pk,) = connection.ops.fetch_returned_insert_columns(
                    cursor, self.returning_params)
            else:
                pk = connection.ops.last_insert_id(cursor, meta.db_table, meta.pk.column)
        self.obj.pk = pk
        self.obj._state.adding = False
        self.obj._state.db = self.using
        return self.obj


def update_compiled(queryset: QuerySet, **values: Any) -> CompiledUpdate:
    """`queryset.update(**values)` compiled, to run later (the queryset's own fields: a model
    with a parent table needs an UPDATE per table, which this does not make)."""
    query = queryset.query.chain(UpdateQuery)
    query.add_update_values(values)
    query.annotations = {}
    compiler = query.get_compiler(queryset.db)
    sql, params = compiler.as_sql()
    return CompiledUpdate(sql=sql, params=tuple(params), using=queryset.db)


def insert_compiled(obj: Model, *, using: str = "default") -> CompiledInsert:
    """`obj.save(force_insert=True)` compiled, to run later (a model without a parent table;
    no save signals are sent, and the engine's step rows have no receivers)."""
    meta = obj._meta
    fields = [field for field in meta.local_concrete_fields if field is not meta.auto_field]
    query = InsertQuery(type(obj))
    query.insert_values(fields, [obj])
    compiler = query.get_compiler(using)
    returning = compiler.connection.features.can_return_columns_from_insert
    compiler.returning_fields = [meta.pk] if returning else None
    ((sql, params),) = compiler.as_sql()
    return CompiledInsert(sql=sql, params=tuple(params), using=using,
                          returning_params=compiler.returning_params if returning else None,
                          obj=obj)
