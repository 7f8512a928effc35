"""${message}

Revision ID: ${up_revision}
Revises: ${down_revision | comma,n}
"""
from alembic import op  # noqa: F401

revision = ${repr(up_revision)}
down_revision = ${repr(down_revision)}
branch_labels = ${repr(branch_labels)}
depends_on = ${repr(depends_on)}

# A sharded table changes through one shardid.apply_ddl() per migration, in
# op.get_context().autocommit_block(): see versions/0001_photos_mood.py.


def upgrade():
    pass


def downgrade():
    pass
