"""Unit tests of the ORM integrations (shardid_sqlalchemy, shardid_django)
with a fake shard map: no server (engines are made but never connect).
test/tap/apps.pl runs their example apps and writers against real servers.

    python3 -m pytest test_shardid_orm.py
"""

import json
import unittest

try:
    import sqlalchemy
except ImportError:
    sqlalchemy = None
try:
    import django
except ImportError:
    django = None

# make_id('2026-11-22 03:13:48.171+00', shard, 1) under the default layout
def make_id(shard, seq=1):
    return (4035735874804122625 >> 23 << 23) | (shard << 10) | seq


class FakeShardMap:
    """What the integrations use of a ShardMap: 16 shards, 0-7 on a, 8-15 on b."""

    def __init__(self):
        self.placement = {s: ("a" if s < 8 else "b") for s in range(16)}
        self.nodes = {"a": "host=/tmp/a port=5432 dbname=app user=app", "b": "host=/tmp/b dbname=app"}
        self.retried = []

    def node_for_shard(self, shard):
        return self.placement[shard]

    def shard_of(self, id):
        return (int(id) >> 10) & 8191

    def schema_for_shard(self, shard):
        return f"shard_{shard:04d}"

    def shards(self):
        return sorted(self.placement)

    def retry(self, shard, attempt):
        self.retried.append(shard)
        return attempt(self.node_for_shard(shard))


@unittest.skipIf(sqlalchemy is None, "python3-sqlalchemy is not installed")
class SQLAlchemy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from sqlalchemy import BigInteger, Column, FetchedValue, Text
        from sqlalchemy.orm import declarative_base

        import shardid_sqlalchemy

        cls.sa = shardid_sqlalchemy
        Base = declarative_base()

        class Post(Base):
            __tablename__ = "posts"
            __table_args__ = {"schema": "shard"}
            id = Column(BigInteger, primary_key=True, server_default=FetchedValue())
            user_id = Column(BigInteger, nullable=False)
            body = Column(Text, nullable=False)

            @property
            def shard(self):
                return self.user_id % 16

        cls.Post = Post
        cls.mapper = sqlalchemy.inspect(Post)

    def setUp(self):
        self.m = FakeShardMap()
        self.engines = self.sa.engines_for(self.m.nodes)
        self.Session = self.sa.sharded_sessionmaker(self.m, self.engines)

    def test_engines_from_connect_strings(self):
        e = self.engines["a"]
        self.assertEqual(e.dialect.name, "postgresql")
        self.assertEqual(e.dialect.driver, "psycopg" if sqlalchemy.__version__ >= "2" else "psycopg2")
        self.assertEqual(self.sa._parse_conninfo(self.m.nodes["a"]),
                         {"host": "/tmp/a", "port": "5432", "dbname": "app", "user": "app"})

    def test_bind_of_a_shard_is_its_nodes_engine_with_the_schema_translated(self):
        with self.Session() as s:
            b5 = s.bind_for_shard(5)
            self.assertIs(b5.pool, self.engines["a"].pool)
            self.assertEqual(b5.get_execution_options()["schema_translate_map"], {"shard": "shard_0005"})
            self.assertIs(s.bind_for_shard(5), b5)  # made once
            self.assertIs(s.get_bind(self.mapper, shard_id=12).pool, self.engines["b"].pool)
            self.m.placement[5] = "b"  # moved: the next bind is on b
            self.assertIs(s.bind_for_shard(5).pool, self.engines["b"].pool)

    def test_new_objects_go_to_their_shard(self):
        with self.Session() as s:
            p = self.Post(user_id=19, body="x")
            self.assertEqual(s._choose_shard_and_assign(self.mapper, p), 3)
            self.assertEqual(s.get_bind(self.mapper, instance=self.Post(user_id=10, body="y")).get_execution_options()
                             ["schema_translate_map"], {"shard": "shard_0010"})

    def test_identity_lookups_go_to_the_ids_shard(self):
        with self.Session() as s:
            self.assertEqual(s._choose_identity(self.Post, (make_id(9),)), [9])
            self.assertEqual(s._choose_identity(self.Post, make_id(0)), [0])

    def test_queries_by_id_go_to_those_shards_others_fan_out(self):
        from sqlalchemy import select

        class Ctx:
            def __init__(self, statement, parameters=None):
                self.statement = statement
                self.parameters = parameters or {}

        Post = self.Post
        with self.Session() as s:
            choose = lambda stmt: s._choose_shards(Ctx(stmt))
            self.assertEqual(choose(select(Post).where(Post.id == make_id(7))), [7])
            self.assertEqual(choose(select(Post).where(Post.id.in_([make_id(9), make_id(2), make_id(9, 5)]))), [2, 9])
            self.assertEqual(choose(select(Post).where(Post.id == make_id(4), Post.body == "x")), [4])
            self.assertEqual(choose(select(Post).where(Post.body == "x")), list(range(16)))
            self.assertEqual(choose(select(Post)), list(range(16)))
            self.assertEqual(choose(select(Post).where(Post.user_id == make_id(3))), list(range(16)))
            # session.get(): the ID is a parameter of the statement
            from sqlalchemy import bindparam
            self.assertEqual(s._choose_shards(Ctx(select(Post).where(Post.id == bindparam("pk_1")),
                                                  {"pk_1": make_id(11)})), [11])

    def test_a_statement_without_object_or_shard_is_refused(self):
        with self.Session() as s, self.assertRaisesRegex(ValueError, "needs execution_options"):
            s.get_bind(self.mapper)

    def test_transaction_is_retried_through_the_map(self):
        calls = []
        self.assertEqual(self.sa.transaction(self.m, self.Session, 5, lambda s: calls.append(s) or 7), 7)
        self.assertEqual(self.m.retried, [5])
        self.assertIsInstance(calls[0], self.sa.ShardIdSession)


@unittest.skipIf(django is None, "python3-django is not installed")
class Django(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import os
        import sys

        from django.conf import settings

        cls.fake = FakeShardMap()
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "examples", "django_app"))
        import shardid_django

        cls.dj = shardid_django
        if not settings.configured:
            settings.configure(
                DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "router"},
                           **shardid_django.databases(cls.fake.nodes)},
                DATABASE_ROUTERS=["shardid_django.ShardRouter"],
                SHARDID_SHARD_MAP=lambda: cls.fake,
                INSTALLED_APPS=["blog"], USE_TZ=True)
            django.setup()
        from blog.models import Post

        cls.Post = Post
        cls.router = shardid_django.ShardRouter()

    def test_databases_from_connect_strings(self):
        d = self.dj.databases({"a": "host=/tmp/a port=5433 dbname=app user=app application_name=web"},
                              CONN_MAX_AGE=60)
        self.assertEqual(d["a"], {"ENGINE": "django.db.backends.postgresql", "NAME": "app", "HOST": "/tmp/a",
                                  "PORT": "5433", "USER": "app", "PASSWORD": "",
                                  "OPTIONS": {"application_name": "web"}, "CONN_MAX_AGE": 60})

    def test_shard_models(self):
        P5 = self.dj.shard_model(self.Post, 5)
        self.assertIs(self.dj.shard_model(self.Post, 5), P5)
        self.assertEqual((P5._meta.db_table, P5._meta.managed, P5.shardid_shard), ('"shard_0005"."posts"', False, 5))
        P12 = self.dj.shard_model(self.Post, 12, table="posts_archive")
        self.assertEqual(P12._meta.db_table, '"shard_0012"."posts_archive"')
        sql = str(P12.objects.filter(id=make_id(12)).query)
        self.assertIn('FROM "shard_0012"."posts_archive" WHERE "shard_0012"."posts_archive"."id" = ', sql)

    def test_router(self):
        r = self.router
        P5, P12 = self.dj.shard_model(self.Post, 5), self.dj.shard_model(self.Post, 12)
        self.assertEqual((r.db_for_write(P5), r.db_for_read(P12)), ("a", "b"))
        self.assertEqual(r.db_for_read(P5, instance=P12(id=make_id(12))), "a")  # the model's own shard first
        self.assertEqual(r.db_for_read(self.Post, shard=9), "b")
        self.assertEqual(r.db_for_write(self.Post, id=make_id(3)), "a")
        self.assertEqual(r.db_for_write(self.Post, id=str(make_id(15))), "b")
        self.assertEqual(r.db_for_write(self.Post, instance=P12(user_id=1)), "b")
        self.assertIsNone(r.db_for_read(self.Post))  # no shard: the default database
        self.assertTrue(r.allow_relation(P5(), P5()))
        self.assertFalse(r.allow_relation(P5(), P12()))
        self.assertFalse(r.allow_migrate("a", "blog"))
        self.assertIsNone(r.allow_migrate("default", "blog"))
        self.fake.placement[5] = "b"
        try:
            self.assertEqual(r.db_for_write(P5), "b")  # the map, not a cached answer
        finally:
            self.fake.placement[5] = "a"

    def test_ids_serialised_as_strings(self):
        p = self.dj.shard_model(self.Post, 5)(id=make_id(5, 1023), user_id=5, body="x")
        text = json.dumps(p.as_json())
        self.assertEqual(json.loads(text)["id"], str(make_id(5, 1023)))
        # Django's own serializer writes a JSON number: a JavaScript reader rounds it
        from django.core import serializers
        number = json.loads(serializers.serialize("json", [p]))[0]["pk"]
        self.assertEqual(number, make_id(5, 1023))
        self.assertNotEqual(int(float(number)), make_id(5, 1023))

    def test_run_is_retried_through_the_map(self):
        from unittest import mock

        with mock.patch("django.db.transaction.atomic") as atomic:
            self.assertEqual(self.dj.run(12, lambda: "ran"), "ran")
        atomic.assert_called_once_with(using="b")
        self.assertIn(12, self.fake.retried)


if __name__ == "__main__":
    unittest.main()
