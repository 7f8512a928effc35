"""The SQLAlchemy recipe of docs/applications.md, tested on a database with
shardid (test/tap/orm_recipes.pl): server_default, RETURNING, return_defaults
for bulk saves, and schema_translate_map for a logical shard.

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test_sqlalchemy_recipe.py
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import sqlalchemy  # noqa: E402
from sqlalchemy import BigInteger, Column, FetchedValue, Text, create_engine, insert, select, text  # noqa: E402
from sqlalchemy.orm import Session, declarative_base  # noqa: E402

from shardid_ids import decode  # noqa: E402

DRIVER = "psycopg" if sqlalchemy.__version__ >= "2" else "psycopg2"
engine = create_engine(f"postgresql+{DRIVER}://", connect_args=dict(
    host=os.environ["PGHOST"], port=os.environ["PGPORT"], user=os.environ["PGUSER"], dbname=os.environ["PGDATABASE"]))
Base = declarative_base()


class Photo(Base):
    __tablename__ = "photos"
    __table_args__ = {"schema": "public"}
    # server_default: SQLAlchemy never sends the ID and fetches it (RETURNING);
    # create_all() writes this DEFAULT into the table
    id = Column(BigInteger, primary_key=True,
                server_default=text("shardid.next_id(5, 'public.photos_gen'::regclass)"))
    caption = Column(Text)


class ShardPost(Base):
    """A table of every logical shard: the placeholder schema "shard" is
    translated per connection (schema_translate_map)."""
    __tablename__ = "posts"
    __table_args__ = {"schema": "shard"}
    id = Column(BigInteger, primary_key=True, server_default=FetchedValue())
    body = Column(Text)


def exact(caption):
    with engine.connect() as c:
        return c.execute(text("SELECT id FROM public.photos WHERE caption = :c"), {"c": caption}).scalar_one()


class SQLAlchemyRecipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        print(f"sqlalchemy {sqlalchemy.__version__} ({DRIVER})")
        with engine.begin() as c:
            c.execute(text("CREATE SEQUENCE IF NOT EXISTS public.photos_gen AS bigint"))
        Photo.__table__.create(engine, checkfirst=True)

    def test_the_default_is_in_the_table(self):
        with engine.connect() as c:
            d = c.execute(text("SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'public.photos'::regclass")).scalar_one()
        self.assertEqual(d, "shardid.next_id(5, 'photos_gen'::regclass)")

    def test_orm_add_returns_the_id(self):
        with Session(engine) as s, s.begin():
            p = Photo(caption="orm")
            s.add(p)
            s.flush()
            id = p.id
        self.assertEqual(id, exact("orm"))
        self.assertEqual(decode(id)[1], 5)
        with Session(engine) as s:
            self.assertEqual(s.get(Photo, id).caption, "orm")

    def test_bulk_save_needs_return_defaults(self):
        with Session(engine) as s, s.begin():
            plain = [Photo(caption="bulk plain")]
            s.bulk_save_objects(plain)
            self.assertIsNone(plain[0].id)  # the trap: the row is there, the object has no ID
            withids = [Photo(caption="bulk 1"), Photo(caption="bulk 2")]
            s.bulk_save_objects(withids, return_defaults=True)
        self.assertEqual([p.id for p in withids], [exact("bulk 1"), exact("bulk 2")])
        self.assertEqual({decode(p.id)[1] for p in withids}, {5})

    def test_core_insert_returning(self):
        with engine.begin() as c:
            ids = c.execute(insert(Photo.__table__).values([{"caption": "core 1"}, {"caption": "core 2"}])
                            .returning(Photo.__table__.c.id)).scalars().all()
        self.assertEqual(ids, [exact("core 1"), exact("core 2")])
        with engine.begin() as c:
            result = c.execute(insert(Photo.__table__), [{"caption": "core many 1"}, {"caption": "core many 2"}])
            # the trap: an executemany without return_defaults / RETURNING hands back no IDs
            keys = result.inserted_primary_key_rows
        self.assertTrue(all(k is None or k[0] is None for k in keys), keys)

    def test_schema_translate_map_for_a_shard(self):
        with engine.begin() as c:
            c.execute(text("SELECT shardid.create_shard(7)"))
            c.execute(text("CREATE TABLE IF NOT EXISTS public.posts (id bigint PRIMARY KEY, body text)"))
            c.execute(text("SELECT shardid.create_table('public.posts')"))
        shard7 = engine.execution_options(schema_translate_map={"shard": "shard_0007"})
        with Session(shard7) as s, s.begin():
            post = ShardPost(body="in shard 7")
            s.add(post)
            s.flush()
            id = post.id
        self.assertEqual(decode(id)[1], 7)
        with engine.connect() as c:
            self.assertEqual(c.execute(text("SELECT body FROM shard_0007.posts WHERE id = :i"), {"i": id}).scalar_one(),
                             "in shard 7")
        with Session(shard7) as s:
            self.assertEqual(s.execute(select(ShardPost).where(ShardPost.id == id)).scalar_one().body, "in shard 7")


if __name__ == "__main__":
    unittest.main(verbosity=2)
