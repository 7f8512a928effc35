-- shardid, area shards: logical shards as schemas.
--
-- A logical shard is a schema (shard_0005) holding one generator sequence
-- (shard_0005.id_seq) and a copy of every sharded table, whose id column
-- defaults to shardid.next_id(5, 'shard_0005.id_seq'::regclass). One
-- generator per shard makes IDs unique across every table of the shard,
-- and the shard field makes them unique across shards.
--
-- The functions are SECURITY INVOKER: the schemas, sequences and tables
-- belong to the caller, who needs CREATE on the database and INSERT,
-- UPDATE, DELETE on the registry (granted by the extension's owner; see
-- README "Logical shards"). Every function pins search_path to pg_catalog,
-- pg_temp and qualifies every name it builds. The *_proc procedures commit
-- in batches, for more shards than one transaction can lock; a SET clause
-- would forbid their COMMIT, so their bodies only call such functions
-- (qualified) and COMMIT, starting with _require_commit(_commit_allowed(),
-- ...), as every procedure does.
--
-- Time partitions of tables keyed by ID: IDs sort by time, so PARTITION BY
-- RANGE (id) with time_to_id() bounds is partitioning by time, and WHERE
-- id >= time_to_id(a) AND id < time_to_id(b) prunes to the partitions of
-- [a, b) (create_time_partitions()).

\ir _shard_schema_name.sql
\ir _require_shard.sql
\ir _require_shard_range.sql
\ir _require_registry_privileges.sql
\ir _require_generator.sql
\ir _index_list.sql
\ir _name_indexes.sql
\ir _create_shard_table.sql
\ir _create_shard_tables.sql
\ir create_shard.sql
\ir create_shards.sql
\ir _create_shards_start.sql
\ir _raise_out_of_locks.sql
\ir _create_shards_batch.sql
\ir _create_shards_done.sql
\ir create_shards_proc.sql
\ir shard_schema.sql
\ir _register_table.sql
\ir create_table.sql
\ir _create_table_start.sql
\ir _create_table_batch.sql
\ir _batch_next.sql
\ir _batch_run.sql
\ir _create_table_done.sql
\ir create_table_proc.sql
\ir drop_table.sql
\ir _refuse_template_drop.sql
\ir template_drop.sql
\ir attach_shard.sql
\ir detach_shard.sql
\ir adopt.sql
\ir shards.sql
\ir create_time_partitions.sql
\ir _refuse_retired_write.sql
\ir _refuse_frozen_write.sql
