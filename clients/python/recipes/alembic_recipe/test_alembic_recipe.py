"""The Alembic recipe of docs/shards.md, tested on a database with shardid
and dblink (test/tap/orm_recipes.pl): on a sharded table public.photos
(4 shards), `alembic upgrade head` runs 0001 (apply_ddl() adds a column
with a default) and 0002 (apply_ddl() builds an index CONCURRENTLY), each
in op.get_context().autocommit_block(); `alembic downgrade base` drops
both through apply_ddl(). The trap: the same CALL in Alembic's transaction
is refused (25001).

    PGHOST=... PGPORT=... PGUSER=... PGDATABASE=... python3 -m pytest test_alembic_recipe.py
"""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import alembic  # noqa: E402
import sqlalchemy  # noqa: E402
from alembic import command  # noqa: E402
from alembic.config import Config  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.exc import DBAPIError  # noqa: E402

from shardid_ids import decode  # noqa: E402

DRIVER = "psycopg" if sqlalchemy.__version__ >= "2" else "psycopg2"
engine = create_engine(f"postgresql+{DRIVER}://", isolation_level="AUTOCOMMIT", connect_args=dict(
    host=os.environ["PGHOST"], port=os.environ["PGPORT"], user=os.environ["PGUSER"], dbname=os.environ["PGDATABASE"]))

TABLES = ["public.photos", "shard_0000.photos", "shard_0001.photos", "shard_0002.photos", "shard_0003.photos"]
ADD = "ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT 'ok'"
INDEX = "CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)"


def sql(query, **params):
    with engine.connect() as c:
        result = c.execute(text(query), params)
        return result.fetchall() if result.returns_rows else None


def config(**options):
    cfg = Config(os.path.join(HERE, "alembic.ini"))
    for k, v in options.items():
        cfg.set_main_option(k, v)
    return cfg


def moods():
    """table -> the mood column's default, None where it has none"""
    return dict(sql("SELECT t.name, (SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a "
                    "JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum "
                    "WHERE a.attrelid = t.name::regclass AND a.attname = 'mood' AND NOT a.attisdropped) "
                    "FROM unnest(CAST(:t AS text[])) AS t(name)", t=TABLES))


def indexes():
    """table -> whether it has a valid photos_user_id_idx on (user_id), None where it has none"""
    return dict(sql("SELECT t.name, (SELECT i.indisvalid AND pg_get_indexdef(i.indexrelid) LIKE '%(user_id)' "
                    "FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
                    "WHERE i.indrelid = t.name::regclass AND c.relname = 'photos_user_id_idx') "
                    "FROM unnest(CAST(:t AS text[])) AS t(name)", t=TABLES))


class AlembicRecipe(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sql("SELECT shardid.create_shards(0, 3)")
        sql("CREATE SEQUENCE public.photos_gen AS bigint")
        sql("CREATE TABLE public.photos (id bigint PRIMARY KEY DEFAULT shardid.next_id(0, 'public.photos_gen'::regclass), "
            "user_id bigint NOT NULL, caption text)")
        sql("SELECT shardid.create_table('public.photos')")
        sql("INSERT INTO shard_0002.photos (user_id, caption) VALUES (7, 'before the migrations')")

    def test_1_trap_apply_ddl_in_alembics_transaction(self):
        # 0002 without autocommit_block(): Alembic's transaction is open around the CALL
        with self.assertRaises(DBAPIError) as cm:
            command.upgrade(config(version_locations=os.path.join(HERE, "trap"),
                                   version_table="alembic_version_trap"), "head")
        e = cm.exception.orig
        code = getattr(e, "pgcode", None) or getattr(e, "sqlstate", None)
        self.assertEqual(code, "25001")  # active_sql_transaction
        self.assertIn("shardid.apply_ddl() cannot run inside a transaction block", str(e))
        print(f"trap: {code} {str(e).splitlines()[0]}")
        # refused before it changed anything: no change in the ledger, no index; Alembic's
        # transaction rolled back, the version table it had made in it too
        self.assertEqual(sql("SELECT count(*) FROM shardid.ddl_changes")[0][0], 0)
        self.assertEqual(set(indexes().values()), {None})
        self.assertEqual(sql("SELECT to_regclass('public.alembic_version_trap')"), [(None,)])

    def test_2_upgrade_and_downgrade(self):
        print(f"alembic {alembic.__version__}, sqlalchemy {sqlalchemy.__version__} ({DRIVER})")
        command.upgrade(config(), "head")
        self.assertEqual(sql("SELECT version_num FROM alembic_version"), [("0002",)])
        # the template and every shard's copy have the column, its default, and the index, valid
        self.assertEqual(moods(), {t: "'ok'::text" for t in TABLES})
        self.assertEqual(indexes(), {t: True for t in TABLES})
        self.assertEqual(sql("SELECT mood FROM shard_0002.photos"), [("ok",)])  # the row of before
        new = sql("INSERT INTO shard_0001.photos (user_id) VALUES (8) RETURNING id, mood")[0]
        self.assertEqual((decode(new[0])[1], new[1]), (1, "ok"))  # the shard's own ID DEFAULT, and the new column's
        # the ledger: both changes finished on all 5 tables, the second CONCURRENTLY; the command as written
        self.assertEqual([tuple(r) for r in sql(
            "SELECT command, concurrent, on_nodes, targets_done, targets_total, running, finished_at IS NOT NULL "
            "FROM shardid.ddl_progress ORDER BY change_id")],
            [(ADD, False, False, 5, 5, [], True), (INDEX, True, False, 5, 5, [], True)])
        print("recipe: upgrade head: 0001 (ADD COLUMN) and 0002 (CREATE INDEX CONCURRENTLY) on the template and 4 shards")

        command.downgrade(config(), "base")
        self.assertEqual(sql("SELECT count(*) FROM alembic_version")[0][0], 0)
        self.assertEqual(moods(), {t: None for t in TABLES})
        self.assertEqual(indexes(), {t: None for t in TABLES})
        self.assertEqual([tuple(r) for r in sql(
            "SELECT command, concurrent, targets_done, finished_at IS NOT NULL "
            "FROM shardid.ddl_progress ORDER BY change_id OFFSET 2")],
            [("DROP INDEX CONCURRENTLY %s_user_id_idx", True, 5, True),
             ("ALTER TABLE %s DROP COLUMN mood", False, 5, True)])
        print("recipe: downgrade base: 0002 then 0001, each through apply_ddl() on every table")


if __name__ == "__main__":
    unittest.main(verbosity=2)
