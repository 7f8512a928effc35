from django.db import models


class Post(models.Model):
    """The fields of every shard's table posts (made on the nodes by
    shardid.create_table('public.posts')). Abstract: shardid_django.shard_model(Post, N)
    is the unmanaged model of shard N's copy."""

    # BigAutoField: Django leaves the ID out of the INSERT and reads it back
    # with RETURNING; the table's DEFAULT shardid.next_id(...) makes it
    id = models.BigAutoField(primary_key=True)
    shardid_table = "posts"  # the table's name in each shard schema
    user_id = models.BigIntegerField()
    body = models.TextField()

    class Meta:
        abstract = True

    def as_json(self):
        # the ID as a string: JSON numbers lose digits above 2^53
        return {"id": str(self.id), "user_id": self.user_id, "body": self.body}
