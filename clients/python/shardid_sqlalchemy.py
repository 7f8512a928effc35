"""shardid_sqlalchemy — SQLAlchemy's horizontal sharding on a shardid ShardMap.

Shard IDs of the session are logical shard numbers. Mapped tables name the
placeholder schema "shard" (``__table_args__ = {"schema": "shard"}``); each
shard's bind is its node's engine with ``schema_translate_map`` turning
"shard" into the shard's schema (``shard_0005``). The node comes from the
ShardMap, so a moved shard is found on its new node at the next session.

- a new object goes to ``shard_for(instance)`` (default: its ``shard``
  attribute, or the shard inside its ID when it has one);
- ``session.get(Model, id)`` goes to the shard inside the ID;
- a query whose WHERE clause compares a shard table's primary key with
  IDs (``==``, ``IN``) goes to their shards; any other query fans out to
  every placed shard and the results are concatenated (ORDER BY and LIMIT
  apply per shard: sort and cut the merged list yourself).

Debian: python3-sqlalchemy (1.4 on Debian 12 with python3-psycopg2; 2.0 on
13 with python3-psycopg, SQLAlchemy's "postgresql+psycopg" dialect).

    from shardid_router import ShardMap
    from shardid_sqlalchemy import engines_for, sharded_sessionmaker, transaction
    m = ShardMap(router=..., nodes=NODES)
    Session = sharded_sessionmaker(m, engines_for(NODES))
    photo_id = transaction(m, Session, 5, lambda s: s.add(Photo(shard=5, caption="dog")) or ...)
"""

import sqlalchemy
from sqlalchemy import create_engine
from sqlalchemy.ext.horizontal_shard import ShardedSession
from sqlalchemy.orm import sessionmaker
from sqlalchemy.sql import operators, visitors

__all__ = ["SHARD_SCHEMA", "ShardIdSession", "engines_for", "sharded_sessionmaker", "transaction"]

#: the placeholder schema that mapped shard tables name
SHARD_SCHEMA = "shard"
_SA2 = int(sqlalchemy.__version__.split(".")[0]) >= 2


def _parse_conninfo(conninfo):
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:  # SQLAlchemy 1.4 on Debian 12: psycopg2
        from psycopg2.extensions import parse_dsn as conninfo_to_dict
    return conninfo_to_dict(conninfo)


def engines_for(nodes, driver=None, **engine_kw):
    """{node: Engine} from the application's {node: libpq connect string}.
    driver: "psycopg" (psycopg 3, SQLAlchemy 2) or "psycopg2"; by default
    the one the installed SQLAlchemy has."""
    driver = driver or ("psycopg" if _SA2 else "psycopg2")
    return {name: create_engine(f"postgresql+{driver}://", connect_args=_parse_conninfo(conninfo), **engine_kw)
            for name, conninfo in nodes.items()}


def _default_shard_for(instance):
    shard = getattr(instance, "shard", None)
    if shard is None:
        raise ValueError(f"{type(instance).__name__} has no shard: set its 'shard' attribute "
                         "(or pass shard_for= to the session)")
    return shard


class ShardIdSession(ShardedSession):
    """A ShardedSession whose shards are the ShardMap's logical shards."""

    def __init__(self, shard_map, engines, shard_for=_default_shard_for, shard_schema=SHARD_SCHEMA, **kw):
        self.shard_map = shard_map
        self._engines = engines
        self._shard_for = shard_for
        self._shard_schema = shard_schema
        self._binds = {}
        choosers = dict(shard_chooser=self._choose_shard, execute_chooser=self._choose_shards)
        if _SA2:
            choosers["identity_chooser"] = self._choose_identity
        else:
            choosers["id_chooser"] = lambda query, ident: self._choose_identity(None, ident)
        super().__init__(**choosers, **kw)

    def _shard_of_identity(self, ident):
        id = ident[0] if isinstance(ident, (tuple, list)) else ident
        return self.shard_map.shard_of(id)

    def _choose_shard(self, mapper, instance, clause=None, **kw):
        if instance is None:
            raise ValueError("shardid: a statement without an object or a shard needs "
                             "execution_options(shard_id=N) or set_shard_id(N)")
        ident = sqlalchemy.inspect(instance).identity
        if ident is not None and ident[0] is not None:
            return self._shard_of_identity(ident)
        return self._shard_for(instance)

    def _choose_identity(self, mapper, primary_key, **kw):
        return [self._shard_of_identity(primary_key)]

    def _choose_shards(self, orm_context):
        statement = orm_context.statement
        params = getattr(orm_context, "parameters", None)
        params = params if isinstance(params, dict) else {}
        ids = []
        where = getattr(statement, "whereclause", None)
        if where is not None:
            def visit_binary(binary):
                col = binary.left
                if not (getattr(col, "primary_key", False) and getattr(getattr(col, "table", None), "schema", None)
                        == self._shard_schema):
                    return
                value = getattr(binary.right, "effective_value", None)
                if value is None and hasattr(binary.right, "key"):
                    value = params.get(binary.right.key)  # session.get() passes the ID as a parameter
                if binary.operator is operators.eq and value is not None:
                    ids.append(value)
                elif binary.operator is operators.in_op and value:
                    ids.extend(value)

            visitors.traverse(where, {}, {"binary": visit_binary})
        if ids:
            return sorted({self.shard_map.shard_of(id) for id in ids})
        return self.shard_map.shards()

    def bind_for_shard(self, shard):
        """The bind of a logical shard: its node's engine, with the placeholder
        schema translated to the shard's schema."""
        node = self.shard_map.node_for_shard(shard)
        bind = self._binds.get((node, shard))
        if bind is None:
            bind = self._engines[node].execution_options(
                schema_translate_map={self._shard_schema: self.shard_map.schema_for_shard(shard)})
            self._binds[(node, shard)] = bind
        return bind

    def get_bind(self, mapper=None, *args, **kw):
        shard_id = kw.get("shard_id", args[0] if args else None)
        if shard_id is None:
            shard_id = self._choose_shard_and_assign(mapper, kw.get("instance"), clause=kw.get("clause"))
        return self.bind_for_shard(shard_id)


def sharded_sessionmaker(shard_map, engines, **kw):
    """A sessionmaker of ShardIdSessions. Binds are cached per session:
    make a session per unit of work (as transaction() does)."""
    return sessionmaker(class_=ShardIdSession, shard_map=shard_map, engines=engines, **kw)


def transaction(shard_map, Session, shard, fn):
    """fn(session) in one transaction on the node of shard, committed, and
    retried as ShardMap.run() retries (frozen or moved shard); returns what
    fn returns. fn may run more than once."""
    def attempt(node):
        with Session() as session:
            with session.begin():
                return fn(session)

    return shard_map.retry(shard, attempt)
