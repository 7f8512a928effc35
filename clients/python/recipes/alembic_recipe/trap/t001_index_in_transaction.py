"""The trap: 0002 without autocommit_block()

Alembic runs it in its transaction, where shardid.apply_ddl() cannot
commit: it refuses with SQLSTATE 25001 (active_sql_transaction) before it
changes anything. test_alembic_recipe.py runs it on a version table of its
own (alembic_version_trap).

Revision ID: t001
Revises:
"""
from alembic import op

revision = "t001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.execute("CALL shardid.apply_ddl('public.photos', 'CREATE INDEX CONCURRENTLY photos_user_id_idx ON %s (user_id)')")


def downgrade():
    pass
