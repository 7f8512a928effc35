from django.db import migrations, models


class Migration(migrations.Migration):
    """The AlterField trap, part 1: a plain BigIntegerField primary key. Django
    drops the column's DEFAULT, and inserts send id NULL."""

    dependencies = [("photos", "0001_initial")]
    operations = [migrations.AlterField("photo", "id", models.BigIntegerField(primary_key=True, serialize=False))]
