from django.db import migrations, models

# The recipe: a generator sequence of its own (never the column's serial or
# identity sequence, which loaddata and AlterField reset), and the column's
# DEFAULT set to shardid.next_id(). DROP IDENTITY: Django 4.1+ makes
# BigAutoField an identity column, which cannot have a DEFAULT.
SHARDID_DEFAULT = """
    CREATE SEQUENCE IF NOT EXISTS public.photos_gen AS bigint;
    ALTER TABLE public.photos ALTER COLUMN id DROP IDENTITY IF EXISTS;
    ALTER TABLE public.photos ALTER COLUMN id SET DEFAULT shardid.next_id(5, 'public.photos_gen'::regclass);
"""


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [
        migrations.CreateModel(
            name="Photo",
            fields=[("id", models.BigAutoField(primary_key=True, serialize=False)), ("caption", models.TextField())],
            options={"db_table": "photos"},
        ),
        migrations.RunSQL(SHARDID_DEFAULT, reverse_sql=migrations.RunSQL.noop),
        migrations.CreateModel(
            name="TrapPhoto",
            fields=[("id", models.BigAutoField(primary_key=True, serialize=False)), ("caption", models.TextField())],
            options={"db_table": "trap_photos"},
        ),
        # the trap, not the recipe: the generator is the column's own sequence
        migrations.RunSQL("""
            ALTER TABLE public.trap_photos ALTER COLUMN id DROP IDENTITY IF EXISTS;
            CREATE SEQUENCE IF NOT EXISTS public.trap_photos_id_seq AS bigint OWNED BY public.trap_photos.id;
            ALTER TABLE public.trap_photos ALTER COLUMN id SET DEFAULT shardid.next_id(5, 'public.trap_photos_id_seq'::regclass);
        """, reverse_sql=migrations.RunSQL.noop),
    ]
