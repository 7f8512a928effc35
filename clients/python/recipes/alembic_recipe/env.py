"""Alembic's environment for the recipe: online migrations only, on the
database of the libpq variables PGHOST, PGPORT, PGUSER, PGDATABASE.
transactional_ddl as Alembic's PostgreSQL default: each run is one
transaction, which a migration that calls shardid.apply_ddl() leaves with
op.get_context().autocommit_block()."""
import os

import sqlalchemy
from alembic import context
from sqlalchemy import create_engine

DRIVER = "psycopg" if sqlalchemy.__version__ >= "2" else "psycopg2"

if context.is_offline_mode():
    raise SystemExit("the recipe runs online: apply_ddl() commits per batch on the server")

engine = create_engine(f"postgresql+{DRIVER}://", connect_args=dict(
    host=os.environ["PGHOST"], port=os.environ["PGPORT"], user=os.environ["PGUSER"], dbname=os.environ["PGDATABASE"]))
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=None,
                      version_table=context.config.get_main_option("version_table", "alembic_version"))
    with context.begin_transaction():
        context.run_migrations()
engine.dispose()
