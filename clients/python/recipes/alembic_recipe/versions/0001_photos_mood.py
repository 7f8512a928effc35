"""photos.mood: a column with a default on the template and every shard

The recipe for changing a sharded table: shardid.apply_ddl() runs the
statement on the template (public.photos) and on every shard's copy (%s =
each table's schema-qualified name). It commits per batch, so it cannot run
in Alembic's transaction: autocommit_block() commits that transaction and
runs the CALL on its own. One apply_ddl() per migration: after an
interruption, `alembic upgrade` runs the migration again whole, and
apply_ddl() finishes its unfinished change, but would run a finished one
again, and fail.

Revision ID: 0001
Revises:
"""
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    with op.get_context().autocommit_block():
        op.execute("CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s ADD COLUMN mood text NOT NULL DEFAULT ''ok''')")


def downgrade():
    with op.get_context().autocommit_block():
        op.execute("CALL shardid.apply_ddl('public.photos', 'ALTER TABLE %s DROP COLUMN mood')")
