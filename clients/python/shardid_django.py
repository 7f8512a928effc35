"""shardid_django — a Django database router on a shardid ShardMap.

Each data node is a database alias named after the node (``databases()``
makes the DATABASES entries from the application's node connect strings).
Sharded tables are unmanaged models, one concrete class per logical shard,
made from an abstract model by ``shard_model(Abstract, shard)``: its
db_table is ``"shard_0005"."posts"``, and the router sends it to the
shard's node. ``db_for_read``/``db_for_write`` take the shard from, in
order: the model's shard, the ``shard`` or ``id`` hint
(``Model.objects.db_manager(hints={"id": some_id})``), or the instance hint's
shard or primary key. Anything else goes to the default database (None).

    # settings.py
    DATABASES = {"default": {...the router or any unsharded database...},
                 **shardid_django.databases(NODES)}
    DATABASE_ROUTERS = ["shardid_django.ShardRouter"]
    SHARDID_SHARD_MAP = "myapp.shards.shard_map"     # a ShardMap, or a callable returning one

    # models.py
    class Post(models.Model):          # abstract: the fields of every shard's posts
        id = models.BigAutoField(primary_key=True)
        ...
        class Meta:
            abstract = True
    post = shardid_django.shard_model(Post, 5).objects.create(...)
    shardid_django.run(5, lambda: ...)              # in a transaction on shard 5's node, move-aware

Debian: python3-django (3.2 on Debian 12, with python3-psycopg2; 4.2 on 13,
with python3-psycopg).
"""

import threading

from django.conf import settings
from django.db import models, transaction
from django.utils.module_loading import import_string

__all__ = ["ShardRouter", "databases", "get_shard_map", "run", "shard_model", "shard_of_model"]

_models = {}
_models_lock = threading.Lock()
_shard_map = None


def databases(nodes, **common):
    """DATABASES entries {node: settings} from {node: libpq connect string};
    common settings (e.g. CONN_MAX_AGE, TEST) are added to each."""
    try:
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        from psycopg2.extensions import parse_dsn as conninfo_to_dict
    out = {}
    for name, conninfo in nodes.items():
        d = conninfo_to_dict(conninfo)
        entry = {"ENGINE": "django.db.backends.postgresql", "NAME": d.pop("dbname", ""),
                 "HOST": d.pop("host", ""), "PORT": d.pop("port", ""), "USER": d.pop("user", ""),
                 "PASSWORD": d.pop("password", ""), "OPTIONS": d}
        entry.update(common)
        out[name] = entry
    return out


def get_shard_map():
    """The ShardMap named by settings.SHARDID_SHARD_MAP (a ShardMap, a dotted path
    to one, or a callable returning one), made once."""
    global _shard_map
    if _shard_map is None:
        value = getattr(settings, "SHARDID_SHARD_MAP")
        if isinstance(value, str):
            value = import_string(value)
        _shard_map = value() if callable(value) else value
    return _shard_map


def shard_model(abstract, shard, schema=None, table=None):
    """The unmanaged model of an abstract model's table in one logical shard
    (made once per shard). Its db_table is "<shard schema>"."<table>"; table
    defaults to the abstract model's shardid_table attribute, else its name
    in lower case."""
    key = (abstract, shard, schema, table)
    model = _models.get(key)
    if model is not None:
        return model
    with _models_lock:
        model = _models.get(key)
        if model is None:
            schema = schema or get_shard_map().schema_for_shard(shard)
            table = table or getattr(abstract, "shardid_table", None) or abstract._meta.model_name
            meta = type("Meta", (), {"managed": False, "db_table": f'"{schema}"."{table}"',
                                     "app_label": abstract._meta.app_label})
            model = type(f"{abstract.__name__}_{schema}", (abstract,),
                         {"Meta": meta, "__module__": abstract.__module__, "shardid_shard": shard})
            _models[key] = model
    return model


def shard_of_model(model):
    """The logical shard of a model made by shard_model(), else None."""
    return getattr(model, "shardid_shard", None)


class ShardRouter:
    """DATABASE_ROUTERS entry: shard models and hinted queries go to the node
    of their shard."""

    def _shard(self, model, hints):
        shard = shard_of_model(model)
        if shard is not None:
            return shard
        if hints.get("shard") is not None:
            return hints["shard"]
        if hints.get("id") is not None:
            return get_shard_map().shard_of(hints["id"])
        instance = hints.get("instance")
        if instance is not None:
            shard = shard_of_model(type(instance))
            if shard is not None:
                return shard
            if getattr(type(instance), "shardid_sharded", False) and instance.pk is not None:
                return get_shard_map().shard_of(instance.pk)
        return None

    def _node(self, model, hints):
        shard = self._shard(model, hints)
        return None if shard is None else get_shard_map().node_for_shard(shard)

    def db_for_read(self, model, **hints):
        return self._node(model, hints)

    def db_for_write(self, model, **hints):
        return self._node(model, hints)

    def allow_relation(self, obj1, obj2, **hints):
        s1, s2 = shard_of_model(type(obj1)), shard_of_model(type(obj2))
        if s1 is None and s2 is None:
            return None
        return s1 == s2

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        # shard tables are made by shardid.create_table() on the nodes, never by migrate
        if db in get_shard_map().nodes:
            return False
        return None


def run(shard, fn):
    """fn() in a transaction (transaction.atomic) on the node of shard,
    retried as ShardMap.run() retries (frozen or moved shard); returns what
    fn returns. fn may run more than once."""
    def attempt(node):
        with transaction.atomic(using=node):
            return fn()

    return get_shard_map().retry(shard, attempt)
