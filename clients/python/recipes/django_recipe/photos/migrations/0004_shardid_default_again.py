import importlib

from django.db import migrations

# The recipe after any AlterField of the ID column: set the DEFAULT again.
SHARDID_DEFAULT = importlib.import_module("photos.migrations.0001_initial").SHARDID_DEFAULT


class Migration(migrations.Migration):
    dependencies = [("photos", "0003_id_bigauto_again")]
    operations = [migrations.RunSQL(SHARDID_DEFAULT, reverse_sql=migrations.RunSQL.noop)]
