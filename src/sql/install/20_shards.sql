-- shardid install script, part 20: logical shards as schemas.
--
-- A logical shard is a schema (shard_0005) holding one generator sequence
-- (shard_0005.id_seq) and a copy of every sharded table, whose id column
-- defaults to shardid.next_id(5, 'shard_0005.id_seq'::regclass). One generator per
-- shard makes IDs unique across every table of the shard, and the shard
-- field makes them unique across shards.
--
-- The registry (shard_registry, sharded_tables) is made of extension
-- configuration tables, so pg_dump carries it. The functions are SECURITY
-- INVOKER: the schemas, sequences and tables belong to the caller, who needs
-- CREATE on the database and INSERT, UPDATE, DELETE on the registry (granted
-- by the extension's owner; see README "Logical shards"). Every function
-- pins search_path to pg_catalog, pg_temp and qualifies every name it builds.
-- The *_proc procedures commit in batches, for more shards than one
-- transaction can lock; a SET clause would forbid their COMMIT, so their
-- bodies only call such functions (qualified) and COMMIT, starting with
-- _require_commit(_commit_allowed(), ...), as every procedure does.
\ir ../tables/shard_registry.sql
\ir ../tables/sharded_tables.sql
\ir ../functions/_shard_schema_name.sql
\ir ../functions/_check_shard.sql
\ir ../functions/_check_shard_range.sql
\ir ../functions/_check_registry_privileges.sql
\ir ../functions/_check_generator.sql
\ir ../functions/_commit_allowed.sql
\ir ../functions/_require_commit.sql
\ir ../functions/_check_batch_size.sql
\ir ../functions/_batch_progress.sql
\ir ../functions/_index_list.sql
\ir ../functions/_name_indexes.sql
\ir ../functions/_create_shard_table.sql
\ir ../functions/_create_shard_tables.sql
\ir ../functions/_check_template.sql
\ir ../functions/_check_templates.sql
\ir ../functions/create_shard.sql
\ir ../functions/create_shards.sql
\ir ../functions/_create_shards_start.sql
\ir ../functions/_create_shards_batch.sql
\ir ../functions/_create_shards_next_batch.sql
\ir ../functions/_create_shards_done.sql
\ir ../procedures/create_shards_proc.sql
\ir ../functions/shard_schema.sql
\ir ../functions/_register_table.sql
\ir ../functions/create_table.sql
\ir ../functions/_create_table_start.sql
\ir ../functions/_create_table_batch.sql
\ir ../functions/_create_table_next_batch.sql
\ir ../functions/_create_table_done.sql
\ir ../procedures/create_table_proc.sql
\ir ../functions/drop_table.sql
\ir ../functions/_refuse_template_drop.sql
\ir ../event_triggers/template_drop.sql
\ir ../functions/attach_shard.sql
\ir ../functions/detach_shard.sql
\ir ../functions/adopt.sql
\ir ../views/shards.sql
