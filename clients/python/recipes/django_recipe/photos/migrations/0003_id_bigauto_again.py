from django.db import migrations, models


class Migration(migrations.Migration):
    """The AlterField trap, part 2: back to BigAutoField. Django gives the
    column a sequence of its own (a serial set to max(id) on 3.2, an identity
    column on 4.1+, where the AlterField fails while any DEFAULT is set: hence
    the DROP DEFAULT): inserts get Django's numbers instead of shardid IDs."""

    dependencies = [("photos", "0002_id_biginteger")]
    operations = [
        migrations.RunSQL("ALTER TABLE public.photos ALTER COLUMN id DROP DEFAULT", reverse_sql=migrations.RunSQL.noop),
        migrations.AlterField("photo", "id", models.BigAutoField(primary_key=True, serialize=False)),
    ]
